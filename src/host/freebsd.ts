// Host identity on this platform. Placeholder until the platform's probe lands: it refuses
// rather than inventing an identity.
import type { IdentityProbe } from './identity';

export const identityProbe: IdentityProbe = {
  async collect() {
    throw new Error('host identity is not implemented for this platform yet');
  },
};
