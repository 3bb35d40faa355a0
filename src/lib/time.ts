/** Unix time in seconds, the unit of every timestamp the API shows. */
export const unix = (d: Date): number => Math.floor(d.getTime() / 1000);
export const nowUnix = (): number => Math.floor(Date.now() / 1000);
