// Products registered in Windows Security Center (root\SecurityCenter2 AntiVirusProduct and
// FirewallProduct, client editions only). productState is undocumented but decoded the same way
// by idera, neophob and StackOverflow 4700897 (research §9.4): bits 12-15 the product state,
// bits 8-11 the owner, bits 4-7 the signature status.
import * as z from 'zod/mini';
import type { Evidence } from '../types';
import { probeSection, type Probe, type Section } from './probe';

export const SecurityCenterProduct = z.object({ displayName: z.string(), productState: z.int() });
export type SecurityCenterProduct = z.infer<typeof SecurityCenterProduct>;

type ProductRunState = 'on' | 'off' | 'snoozed' | 'expired';

export interface ProductState {
  state: ProductRunState;
  /** Signatures (definitions) up to date; meaningless for firewalls. */
  upToDate: boolean;
  /** Microsoft's own product (Defender, Windows Firewall). */
  microsoft: boolean;
}

const RUN_STATES: Record<number, ProductRunState> = { 0x0: 'off', 0x1: 'on', 0x2: 'snoozed', 0x3: 'expired' };

/** Decodes productState; null when any of the three fields holds a value nobody has documented. */
export function decodeProductState(productState: number): ProductState | null {
  if (!Number.isInteger(productState) || productState < 0 || productState > 0xffffff) return null;
  const state = RUN_STATES[(productState >> 12) & 0xf];
  const owner = (productState >> 8) & 0xf;
  const signatures = (productState >> 4) & 0xf;
  if (state === undefined || owner > 1 || signatures > 1) return null;
  return { state, upToDate: signatures === 0, microsoft: owner === 1 };
}

export interface DecodedProduct extends ProductState {
  name: string;
}

/** Products with a decodable state, and how many were not decodable. */
export function decodeProducts(products: SecurityCenterProduct[]): { decoded: DecodedProduct[]; undecodable: number } {
  const decoded: DecodedProduct[] = [];
  let undecodable = 0;
  for (const product of products) {
    const state = decodeProductState(product.productState);
    if (state) decoded.push({ name: product.displayName, ...state });
    else undecodable++;
  }
  return { decoded, undecodable };
}

export function productEvidence(product: DecodedProduct, withSignatures: boolean): Evidence {
  const evidence: Evidence = { name: product.name, state: product.state, microsoft: product.microsoft };
  if (withSignatures) evidence.up_to_date = product.upToDate;
  return evidence;
}

export function securityCenterProducts(probe: Probe, kind: 'antivirus' | 'firewall'): Section<SecurityCenterProduct[]> {
  return probeSection(probe, kind === 'antivirus' ? 'antivirusProducts' : 'firewallProducts', z.array(SecurityCenterProduct));
}
