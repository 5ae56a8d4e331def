// Package seal keeps a SHA-256 checksum inside a JSON document: its last
// field, "sha256", holds the hex digest of the document with that field's
// value empty. The run files (run.json, result.json) and the policy files
// are sealed when written and checked when read, so that an edited or
// damaged file is refused by name instead of being believed.
package seal
