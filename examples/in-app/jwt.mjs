// authenticate with JSON Web Tokens (jose): `Authorization: Bearer <jwt>`, verified with a
// shared secret (HS256) or against a JWKS URL (an identity provider's public keys).
// The principal is the token's claims; a missing or bad token is 401.
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { ServiceError } from '@resourcery/core';

/**
 * @param {{ secret?: string, jwksUrl?: string, issuer?: string, audience?: string }} options
 * @returns {import('@resourcery/core').Authenticate}
 */
export function jwtAuthenticate(options) {
  const key = options.jwksUrl ? createRemoteJWKSet(new URL(options.jwksUrl)) : new TextEncoder().encode(options.secret);
  const algorithms = options.jwksUrl ? ['RS256', 'ES256'] : ['HS256'];
  return async (request) => {
    const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    if (!match) throw new ServiceError('NotAuthorized', 'Send Authorization: Bearer <token>');
    try {
      const { payload } = await jwtVerify(match[1], key, { algorithms, issuer: options.issuer, audience: options.audience });
      return { user: payload.sub, role: payload.role ?? 'customer' };
    } catch {
      // jose's reason (expired, bad signature) stays out of the answer.
      throw new ServiceError('NotAuthorized', 'The token is not valid');
    }
  };
}
