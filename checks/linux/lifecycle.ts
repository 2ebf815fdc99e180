// Release cycles and support end dates for the default OS_VERSION policy.
import type { LifecycleTable } from '../policy';

export const linuxLifecycle: LifecycleTable = {};
