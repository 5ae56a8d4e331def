package seal

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
)

// key is the field seal fills, the document's last "sha256".
var key = []byte(`"sha256":`)

// ErrMismatch is returned by Check for a document whose checksum does not
// match its contents.
var ErrMismatch = errors.New("checksum mismatch: the file was edited or damaged")

// value finds the last "sha256" field of b: the offsets of its string
// value's contents, between the quotes. ok is false without one.
func value(b []byte) (start, end int, ok bool) {
	i := bytes.LastIndex(b, key)
	if i < 0 {
		return 0, 0, false
	}
	j := i + len(key)
	for j < len(b) && (b[j] == ' ' || b[j] == '\t' || b[j] == '\n' || b[j] == '\r') {
		j++
	}
	if j >= len(b) || b[j] != '"' {
		return 0, 0, false
	}
	k := bytes.IndexByte(b[j+1:], '"')
	if k < 0 {
		return 0, 0, false
	}
	return j + 1, j + 1 + k, true
}

// Seal fills the empty "sha256" field that ends b (a JSON object marshaled
// with that field last and empty) with the digest of b.
func Seal(b []byte) ([]byte, error) {
	start, end, ok := value(b)
	if !ok || start != end {
		return nil, errors.New(`seal: the document does not end with an empty "sha256" field`)
	}
	sum := sha256.Sum256(b)
	out := make([]byte, 0, len(b)+2*sha256.Size)
	out = append(out, b[:start]...)
	out = hex.AppendEncode(out, sum[:])
	return append(out, b[end:]...), nil
}

// Check says whether b is sealed (has a non-empty "sha256" field) and, if
// it is, whether the digest matches: an error wrapping ErrMismatch when
// not. A document without the field (written before seals) is unsealed,
// not wrong.
func Check(b []byte) (sealed bool, err error) {
	start, end, ok := value(b)
	if !ok || start == end {
		return false, nil
	}
	want := b[start:end]
	empty := make([]byte, 0, len(b))
	empty = append(empty, b[:start]...)
	empty = append(empty, b[end:]...)
	sum := sha256.Sum256(empty)
	if !bytes.Equal(want, []byte(hex.EncodeToString(sum[:]))) {
		return true, ErrMismatch
	}
	return true, nil
}
