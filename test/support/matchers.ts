// Vitest types its asymmetric matchers as `any`; these name the value each one stands for, so an
// expected object keeps its type (no `any` flows into it).
import { expect } from 'vitest';

export const anyString = (): string => expect.any(String) as string;
export const anyNumber = (): number => expect.any(Number) as number;
export const stringContaining = (text: string): string => expect.stringContaining(text) as string;
export const stringMatching = (pattern: string | RegExp): string => expect.stringMatching(pattern) as string;
export const objectContaining = (fields: Record<string, unknown>): Record<string, unknown> =>
  expect.objectContaining(fields) as Record<string, unknown>;
