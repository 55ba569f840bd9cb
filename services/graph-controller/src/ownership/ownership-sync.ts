import type { Logger } from '@sp/observability';
import type { ClaimIndex } from '../reconcile/claim-index.js';
import type { ClaimMemory } from '../reconcile/claim-memory.js';
import { compareClaims, type GraphClaim } from '../reconcile/desired-state.js';
import type { OwnedName, OwnershipRecords } from './ownership-records.js';

export interface OwnershipSyncDeps {
  ownership: OwnershipRecords;
  memory: ClaimMemory;
  claims: Pick<ClaimIndex, 'claims'>;
  isLeader(): boolean;
  logger: Logger;
}

/** The leader's part of the ownership records, besides each reconcile's own writes. */
export interface OwnershipSync {
  /** A new leadership term: the records are to be read again. */
  newTerm(): void;
  /** The records were read in this term. */
  adopted(): boolean;
  /**
   * What the records say this controller registered joins the claim memory, so the names of
   * Services deleted while no replica ran are reconciled (and deleted) too. Read once per
   * leadership term (again at the next resync if that failed): only the leader writes them.
   */
  adopt(): Promise<void>;
  /**
   * The winner of every claimed name recorded at once, one write per shard, before the reconciles
   * get to them: what each reconcile would record before its registry write, so they find their
   * record written (a start of 10,000 names costs 64 writes, not 10,000). Needs every Service
   * listed, and the records read in this term (so it writes over what it read, not over an
   * adoption's list still under way); a failure leaves the records to the reconciles, one batch at
   * a time.
   */
  recordWinners(): Promise<void>;
}

export function createOwnershipSync(deps: OwnershipSyncDeps): OwnershipSync {
  const { ownership, logger } = deps;
  let adopted = false;
  return {
    newTerm() {
      adopted = false;
    },
    adopted: () => adopted,
    async adopt() {
      if (adopted) return;
      try {
        for (const [name, owned] of await ownership.load()) deps.memory.observe({ name, key: owned.service, url: owned.url, createdAt: Number.POSITIVE_INFINITY });
        adopted = true;
      } catch (err) {
        logger.warn({ err, records: ownership.description }, 'could not read the ownership records: trying again at the next resync');
      }
    },
    async recordWinners() {
      const winners = new Map<string, GraphClaim>();
      for (const claim of deps.claims.claims()) {
        const other = winners.get(claim.name);
        if (!other || compareClaims(claim, other) < 0) winners.set(claim.name, claim);
      }
      const records = [...winners].map(([name, claim]): [string, OwnedName] => [name, { service: claim.key, url: claim.url }]);
      try {
        if (deps.isLeader()) await ownership.ownAll(records);
      } catch (err) {
        logger.warn({ err, records: ownership.description }, 'could not record the names at once: each reconcile records its own');
      }
    },
  };
}
