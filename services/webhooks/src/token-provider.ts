/** Access tokens for calls to other platform services (the GraphQL gateway). */
export interface TokenProvider {
  /** A valid access token, from the cache while it has more than the safety margin left. */
  token(): Promise<string>;
  /** Forgets `token` (the gateway refused it), so the next call fetches a fresh one. */
  invalidate(token: string): void;
}
