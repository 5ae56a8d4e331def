// Package safefile reads the files a user hands the trainer (run files,
// policy files, config files) with a bound: a file that is not a regular
// file (a device such as /dev/zero, a FIFO, a socket, a directory) is
// refused before anything is read from it, and a file larger than its
// limit is refused after reading at most one byte past the limit. Opening
// does not wait: a FIFO with no writer is refused, not waited on.
package safefile
