package tbevents

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"testing"
)

// The vectors below were computed apart from this package: the CRC32C
// values are RFC 3720's (B.4) and the usual check value of "123456789";
// the masks were worked out by hand, ((crc >> 15) | (crc << 17)) +
// 0xa282ead8 mod 2^32, and agree with the tensorboard Python package's
// masked_crc32c.
func TestMaskedCRCKnownVectors(t *testing.T) {
	asc := make([]byte, 32)
	for i := range asc {
		asc[i] = byte(i)
	}
	for _, c := range []struct {
		name   string
		data   []byte
		masked uint32
	}{
		{"123456789 (crc 0xe3069283)", []byte("123456789"), 0xc78ab0e5},
		{"32 zeros (crc 0x8a9136aa)", make([]byte, 32), 0x0fd7fffa},
		{"32 0xff (crc 0x62a8ab43)", bytes.Repeat([]byte{0xff}, 32), 0xf909b029},
		{"0..31 (crc 0x46dd794e)", asc, 0x951f7892},
		{"empty (crc 0)", nil, 0xa282ead8},
	} {
		if got := MaskedCRC(c.data); got != c.masked {
			t.Errorf("MaskedCRC(%s) = %#08x, want %#08x", c.name, got, c.masked)
		}
	}
}

// TestRecordKnownBytes checks whole records against bytes framed by hand
// (Python struct.pack and tensorboard's masked_crc32c).
func TestRecordKnownBytes(t *testing.T) {
	for _, c := range []struct {
		data []byte
		want string
	}{
		{[]byte("hello"), "0500000000000000" + "eab2043e" + "68656c6c6f" + "bb1f1c19"},
		{nil, "0000000000000000" + "29039807" + "d8ea82a2"},
	} {
		var buf bytes.Buffer
		if err := WriteRecord(&buf, c.data); err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(buf.Bytes()); got != c.want {
			t.Errorf("record of %q = %s, want %s", c.data, got, c.want)
		}
		if got := hex.EncodeToString(AppendRecord([]byte("x"), c.data)); got != hex.EncodeToString([]byte("x"))+c.want {
			t.Errorf("AppendRecord(x, %q) = %s", c.data, got)
		}
		back, err := ReadRecord(&buf)
		if err != nil || !bytes.Equal(back, c.data) {
			t.Errorf("ReadRecord = %q, %v; want %q", back, err, c.data)
		}
		if _, err := ReadRecord(&buf); !errors.Is(err, io.EOF) {
			t.Errorf("ReadRecord at the end = %v, want io.EOF", err)
		}
	}
}

// TestReadRecordBadInput cuts a record short at every length and flips
// every bit: each is an error of the right kind, and nothing panics.
func TestReadRecordBadInput(t *testing.T) {
	rec := AppendRecord(nil, []byte("a small event"))
	for n := 1; n < len(rec); n++ {
		if _, err := ReadRecord(bytes.NewReader(rec[:n])); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("record cut to %d of %d bytes: %v, want io.ErrUnexpectedEOF", n, len(rec), err)
		}
	}
	for i := range rec {
		for bit := range 8 {
			bad := bytes.Clone(rec)
			bad[i] ^= 1 << bit
			_, err := ReadRecord(bytes.NewReader(bad))
			// A flipped length bit either fails the length checksum or
			// (never here) reads past the end.
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("byte %d bit %d flipped: %v, want ErrCorrupt", i, bit, err)
			}
		}
	}
}

// header frames a claimed length with its correct checksum.
func header(n uint64) []byte {
	h := binary.LittleEndian.AppendUint64(nil, n)
	return binary.LittleEndian.AppendUint32(h, MaskedCRC(h))
}

// TestReadRecordClaimedLength: a well-checksummed length over MaxRecord is
// refused, and one under it that the input does not hold is an early end,
// read without allocating the claimed size.
func TestReadRecordClaimedLength(t *testing.T) {
	for _, n := range []uint64{MaxRecord + 1, 1 << 63, ^uint64(0)} {
		if _, err := ReadRecord(bytes.NewReader(header(n))); !errors.Is(err, ErrCorrupt) {
			t.Errorf("length %d: %v, want ErrCorrupt", n, err)
		}
	}
	in := append(header(MaxRecord), "short"...)
	allocs := testing.AllocsPerRun(1, func() {
		if _, err := ReadRecord(bytes.NewReader(in)); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("length %d over 5 bytes: %v, want io.ErrUnexpectedEOF", MaxRecord, err)
		}
	})
	if allocs > 20 {
		t.Errorf("%v allocations for 5 bytes", allocs)
	}
}

func TestWriteRecordErrors(t *testing.T) {
	err := WriteRecord(failWriter{}, []byte("x"))
	if !errors.Is(err, errFail) {
		t.Errorf("WriteRecord to a failing writer = %v, want it wrapped", err)
	}
}

var errFail = errors.New("disk full")

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errFail }

// FuzzReadRecord: any input reads without panicking, and a record that
// reads back frames to the bytes it came from.
func FuzzReadRecord(f *testing.F) {
	f.Add(AppendRecord(nil, []byte("hello")))
	f.Add(AppendRecord(AppendRecord(nil, nil), []byte{0, 1, 2}))
	f.Add(header(1 << 40))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		for {
			before := len(in) - r.Len()
			data, err := ReadRecord(r)
			if err != nil {
				return
			}
			if got := AppendRecord(nil, data); !bytes.Equal(got, in[before:len(in)-r.Len()]) {
				t.Fatalf("record %x reads as %x, which frames to %x", in[before:len(in)-r.Len()], data, got)
			}
		}
	})
}
