package tbevents

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// castagnoli is the CRC32C table of TFRecords.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskDelta is the constant that TFRecord's masking adds.
const maskDelta = 0xa282ead8

// MaxRecord is the largest record ReadRecord accepts and WriteRecord writes
// (1 GiB; a scalar event is under 200 bytes).
const MaxRecord = 1 << 30

// headerLen is the length field and its checksum; footerLen the data's
// checksum.
const (
	headerLen = 8 + 4
	footerLen = 4
)

// ErrCorrupt marks a record whose checksum or length is wrong.
var ErrCorrupt = errors.New("tbevents: corrupt record")

// MaskedCRC returns TFRecord's masked CRC32C of b.
func MaskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return ((c >> 15) | (c << 17)) + maskDelta
}

// AppendRecord appends data to buf framed as one TFRecord and returns the
// extended buffer.
func AppendRecord(buf, data []byte) []byte {
	var h [headerLen]byte
	binary.LittleEndian.PutUint64(h[:8], uint64(len(data)))
	binary.LittleEndian.PutUint32(h[8:], MaskedCRC(h[:8]))
	buf = append(buf, h[:]...)
	buf = append(buf, data...)
	return binary.LittleEndian.AppendUint32(buf, MaskedCRC(data))
}

// WriteRecord writes data to w as one TFRecord.
func WriteRecord(w io.Writer, data []byte) error {
	if len(data) > MaxRecord {
		return fmt.Errorf("tbevents: a record of %d bytes is over the %d limit", len(data), MaxRecord)
	}
	if _, err := w.Write(AppendRecord(make([]byte, 0, headerLen+len(data)+footerLen), data)); err != nil {
		return fmt.Errorf("tbevents: write record: %w", err)
	}
	return nil
}

// ReadRecord reads one TFRecord from r and returns its data. It returns
// io.EOF at the end of r, io.ErrUnexpectedEOF (wrapped) for a record cut
// short, and ErrCorrupt (wrapped) for a wrong checksum or a length over
// MaxRecord. Memory grows with the bytes actually read, never with a length
// that the file merely claims.
func ReadRecord(r io.Reader) ([]byte, error) {
	var h [headerLen]byte
	if n, err := io.ReadFull(r, h[:]); err != nil {
		if errors.Is(err, io.EOF) && n == 0 {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("tbevents: record header: %w", io.ErrUnexpectedEOF)
	}
	if got, want := binary.LittleEndian.Uint32(h[8:]), MaskedCRC(h[:8]); got != want {
		return nil, fmt.Errorf("%w: length checksum %#08x, want %#08x", ErrCorrupt, got, want)
	}
	n := binary.LittleEndian.Uint64(h[:8])
	if n > MaxRecord || n > math.MaxInt64-footerLen {
		return nil, fmt.Errorf("%w: length %d is over the %d limit", ErrCorrupt, n, MaxRecord)
	}
	body, err := io.ReadAll(io.LimitReader(r, int64(n)+footerLen))
	if err != nil {
		return nil, fmt.Errorf("tbevents: record data: %w", err)
	}
	if uint64(len(body)) < n+footerLen {
		return nil, fmt.Errorf("tbevents: record data: %d of %d bytes: %w", len(body), n+footerLen, io.ErrUnexpectedEOF)
	}
	data := body[:n]
	if got, want := binary.LittleEndian.Uint32(body[n:]), MaskedCRC(data); got != want {
		return nil, fmt.Errorf("%w: data checksum %#08x, want %#08x", ErrCorrupt, got, want)
	}
	return data, nil
}
