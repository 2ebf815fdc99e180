// This platform's checks, one module each (see checks/registry.ts).
import type { Check } from '../types';

export const checks: readonly Check[] = [];
