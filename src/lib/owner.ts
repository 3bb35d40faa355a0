/** Whose data a call touches: an API key's account and mode (DESIGN 3). Every query filters on both. */
export interface Owner {
  accountId: string;
  livemode: boolean;
}

/** The owner of a stored row (every row carries account_id and livemode). */
export const ownerOf = (row: { account_id: string; livemode: boolean }): Owner => ({ accountId: row.account_id, livemode: row.livemode });
