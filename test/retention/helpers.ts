// Shared with test/ops: test/helpers/partitions.ts. Re-exported for the retention tests.
export { BOUNDED, covers, DAY, dayStart, idAt, otherTableCounts, partitions, relations, type PartitionRow } from '../helpers/partitions.ts';
