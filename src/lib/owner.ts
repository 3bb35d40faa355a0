/** Whose data a call touches: an API key's account and mode (DESIGN 3). Every query filters on both. */
export interface Owner {
  accountId: string;
  livemode: boolean;
}
