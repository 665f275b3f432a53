/**
 * @module shapes/ledger
 * The ledger entry every layer may read: the ledger keeps it, events and errors carry it.
 */

/** One request as the ledger keeps it: three numbers, so it stores as columns or JSON. */
export interface LedgerEntry {
  /** The index of the request's last message. */
  through: number;
  /** The prompt tokens the endpoint reported for the request. */
  prompt: number;
  /** Which unbroken run of appending requests this one belongs to. */
  epoch: number;
}
