// Package tbevents writes TensorBoard event files: the trainer's scalars,
// which `tensorboard --logdir runs/` draws.
//
// An event file is a sequence of TFRecords, each
//
//	uint64 length (little-endian)
//	uint32 masked CRC32C of the 8 length bytes
//	length bytes of data: one serialized Event (proto/tensorboard/v1)
//	uint32 masked CRC32C of the data
//
// where CRC32C is the Castagnoli CRC and masking is
// ((crc >> 15) | (crc << 17)) + 0xa282ead8. The first event of a file holds
// the file version "brain.Event:2". TensorBoard reads every file of a
// directory whose name contains "tfevents", in name order; Create names a
// file events.out.tfevents.<unix seconds>.<host>, as TensorFlow does.
//
// A Writer buffers its records and hands them to the operating system on
// Flush and Close. ReadRecord and ReadEvents read the files back, checking
// both checksums of every record; they serve the tests and any Go reader.
package tbevents
