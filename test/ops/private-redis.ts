// Moved to test/helpers/private-redis.ts (the fault tests of several folders use it); kept for branches in flight.
export { startPrivateRedis, usePrivateRedis, type PrivateRedis } from '../helpers/private-redis.ts';
