package policy

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
)

// MarshalARS encodes the policy in ARS's lin_policy_plus.npz layout: an npz
// whose single entry arr_0 is a length-3 object array [W, mean, std], with W
// of shape (Rows, Cols) and mean and std of shape (Cols,). ARS replays it with
//
//	lin_policy = np.load(path, allow_pickle=True)
//	W, mean, std = list(lin_policy.items())[0][1]
//
// Object arrays are stored by numpy as a pickle; this writer emits that
// pickle (protocol 3, referencing numpy.core.multiarray._reconstruct as old
// numpy does, which numpy 2 still loads). A bias, which ARS does not have, is
// not exported: MarshalARS refuses a policy with a non-zero bias.
func MarshalARS(l *Linear, norm Frozen) ([]byte, error) {
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("policy: npz: %w", err)
	}
	for _, b := range l.Bias {
		if b != 0 {
			return nil, fmt.Errorf("policy: npz: ARS's layout has no bias, and this policy's bias is non-zero")
		}
	}
	if len(norm.Mean) != l.Cols || len(norm.Std) != l.Cols {
		return nil, fmt.Errorf("policy: npz: mean %d and std %d entries, want %d", len(norm.Mean), len(norm.Std), l.Cols)
	}
	var p pickler
	p.begin()
	p.objectArray(func() {
		p.floatArray([]int{l.Rows, l.Cols}, l.W)
		p.floatArray([]int{l.Cols}, norm.Mean)
		p.floatArray([]int{l.Cols}, norm.Std)
	}, 3)
	p.end()

	var npy bytes.Buffer
	npy.Write(npyHeader("|O", "(3,)"))
	npy.Write(p.buf.Bytes())

	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "arr_0.npy", Method: zip.Store})
	if err != nil {
		return nil, fmt.Errorf("policy: npz: %w", err)
	}
	if _, err := w.Write(npy.Bytes()); err != nil {
		return nil, fmt.Errorf("policy: npz: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("policy: npz: %w", err)
	}
	return zbuf.Bytes(), nil
}

// npyHeader returns the NPY v1.0 magic and header, padded to 64 bytes.
func npyHeader(descr, shape string) []byte {
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	total := 10 + len(h) + 1
	pad := (64 - total%64) % 64
	h += string(bytes.Repeat([]byte{' '}, pad)) + "\n"
	out := []byte("\x93NUMPY\x01\x00")
	out = binary.LittleEndian.AppendUint16(out, uint16(len(h)))
	return append(out, h...)
}

// pickler writes the few pickle opcodes needed for numpy arrays.
type pickler struct{ buf bytes.Buffer }

func (p *pickler) begin() { p.buf.Write([]byte{0x80, 3}) } // PROTO 3
func (p *pickler) end()   { p.buf.WriteByte('.') }         // STOP

func (p *pickler) global(module, name string) {
	p.buf.WriteByte('c')
	p.buf.WriteString(module + "\n" + name + "\n")
}

func (p *pickler) int(v int32) {
	p.buf.WriteByte('J') // BININT
	_ = binary.Write(&p.buf, binary.LittleEndian, v)
}

func (p *pickler) unicode(s string) {
	p.buf.WriteByte('X') // BINUNICODE
	_ = binary.Write(&p.buf, binary.LittleEndian, uint32(len(s)))
	p.buf.WriteString(s)
}

func (p *pickler) bytes(b []byte) {
	p.buf.WriteByte('B') // BINBYTES
	_ = binary.Write(&p.buf, binary.LittleEndian, uint32(len(b)))
	p.buf.Write(b)
}

func (p *pickler) mark()  { p.buf.WriteByte('(') }
func (p *pickler) tuple() { p.buf.WriteByte('t') }
func (p *pickler) none()  { p.buf.WriteByte('N') }

// dtype pushes numpy.dtype(code, False, True) with its state.
func (p *pickler) dtype(code, order string, flags int32) {
	p.global("numpy", "dtype")
	p.mark()
	p.unicode(code)
	p.buf.WriteByte(0x89) // NEWFALSE
	p.buf.WriteByte(0x88) // NEWTRUE
	p.tuple()
	p.buf.WriteByte('R') // REDUCE
	p.mark()
	p.int(3)
	p.unicode(order)
	p.none()
	p.none()
	p.none()
	p.int(-1)
	p.int(-1)
	p.int(flags)
	p.tuple()
	p.buf.WriteByte('b') // BUILD
}

// array pushes an empty ndarray via _reconstruct and builds it with shape,
// dtype and the data pushed by data().
func (p *pickler) array(shape []int, dtype func(), data func()) {
	p.global("numpy.core.multiarray", "_reconstruct")
	p.mark()
	p.global("numpy", "ndarray")
	p.mark()
	p.int(0)
	p.tuple()
	p.bytes([]byte("b"))
	p.tuple()
	p.buf.WriteByte('R')
	// state: (1, shape, dtype, is_fortran, data)
	p.mark()
	p.int(1)
	p.mark()
	for _, s := range shape {
		p.int(int32(s))
	}
	p.tuple()
	dtype()
	p.buf.WriteByte(0x89) // NEWFALSE: C order
	data()
	p.tuple()
	p.buf.WriteByte('b')
}

func (p *pickler) floatArray(shape []int, v []float64) {
	raw := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(x))
	}
	p.array(shape, func() { p.dtype("f8", "<", 0) }, func() { p.bytes(raw) })
}

func (p *pickler) objectArray(items func(), n int) {
	p.array([]int{n}, func() { p.dtype("O8", "|", 63) }, func() {
		p.buf.WriteByte(']') // EMPTY_LIST
		p.mark()
		items()
		p.buf.WriteByte('e') // APPENDS
	})
}
