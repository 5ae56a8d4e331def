package convex

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/stpis/stpis/internal/safefile"
)

// ErrFormat is wrapped by every LIBSVM parse error; the message gives the
// line number.
var ErrFormat = errors.New("convex: bad LIBSVM data")

// MaxFeatures is the largest feature index ReadLIBSVM accepts (Matrix
// allocates one column pointer per feature).
const MaxFeatures = 1 << 26

// Dataset is a sparse data set read from a LIBSVM/svmlight file. Feature
// indices are stored 0-based (the file's are 1-based).
type Dataset struct {
	Labels   []float64
	Index    [][]int     // Index[r] are the sorted feature indices of row r
	Value    [][]float64 // Value[r][k] is the value of feature Index[r][k]
	Features int         // largest feature index in the file (1-based)
}

// Rows returns the number of rows.
func (d *Dataset) Rows() int { return len(d.Labels) }

// ReadLIBSVM reads "label idx:val idx:val ..." lines. Indices are 1-based
// and strictly increasing within a line; blank lines and text after '#'
// are ignored. A malformed line gives an error wrapping ErrFormat with
// its line number.
func ReadLIBSVM(r io.Reader) (*Dataset, error) {
	d := &Dataset{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<26)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if k := strings.IndexByte(text, '#'); k >= 0 {
			text = text[:k]
		}
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		label, err := strconv.ParseFloat(fields[0], 64)
		if err != nil || math.IsNaN(label) || math.IsInf(label, 0) {
			return nil, fmt.Errorf("%w: line %d: bad label %q", ErrFormat, line, fields[0])
		}
		idx := make([]int, 0, len(fields)-1)
		val := make([]float64, 0, len(fields)-1)
		for _, f := range fields[1:] {
			is, vs, ok := strings.Cut(f, ":")
			if !ok {
				return nil, fmt.Errorf("%w: line %d: %q is not index:value", ErrFormat, line, f)
			}
			i, err := strconv.Atoi(is)
			if err != nil || i < 1 {
				return nil, fmt.Errorf("%w: line %d: bad index %q (1-based)", ErrFormat, line, is)
			}
			if i > MaxFeatures {
				return nil, fmt.Errorf("%w: line %d: index %d above the limit of %d features", ErrFormat, line, i, MaxFeatures)
			}
			if len(idx) > 0 && i-1 <= idx[len(idx)-1] {
				return nil, fmt.Errorf("%w: line %d: index %d not increasing", ErrFormat, line, i)
			}
			v, err := strconv.ParseFloat(vs, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: line %d: bad value %q", ErrFormat, line, vs)
			}
			idx = append(idx, i-1)
			val = append(val, v)
			d.Features = max(d.Features, i)
		}
		d.Labels = append(d.Labels, label)
		d.Index = append(d.Index, idx)
		d.Value = append(d.Value, val)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("convex: reading line %d: %w", line+1, err)
	}
	return d, nil
}

// MaxFileBytes is the largest LIBSVM file ReadLIBSVMFile reads (the
// largest of the data sets the paper and make data use, ijcnn1, is 31 MB).
const MaxFileBytes = 1 << 30

// ReadLIBSVMFile reads a LIBSVM file: a regular file (a FIFO or a device
// such as /dev/zero is refused before anything is read, wrapping
// safefile.ErrNotRegular) of at most MaxFileBytes (safefile.ErrTooLarge).
// A missing file wraps fs.ErrNotExist.
func ReadLIBSVMFile(path string) (*Dataset, error) {
	f, err := OpenLIBSVMFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := ReadLIBSVM(io.LimitReader(f, MaxFileBytes))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// OpenLIBSVMFile opens path as ReadLIBSVMFile does, checking its kind and
// size, without waiting on a FIFO.
func OpenLIBSVMFile(path string) (*os.File, error) {
	f, err := safefile.Open(path, os.O_RDONLY)
	if err != nil {
		return nil, fmt.Errorf("convex: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("convex: %w", err)
	}
	if st.Size() > MaxFileBytes {
		f.Close()
		return nil, fmt.Errorf("convex: %s: %w: %d bytes, over the limit of %d (1 GiB)", path, safefile.ErrTooLarge, st.Size(), int64(MaxFileBytes))
	}
	return f, nil
}

// binaryCodings are the ways LIBSVM files code two classes: -1/+1 (most),
// 0/1, and 1/2 (mushrooms).
var binaryCodings = [][2]float64{{-1, 1}, {0, 1}, {1, 2}}

// BinaryLabels returns the labels mapped to ±1: the smaller of the two
// distinct labels becomes −1 and the larger +1 (mushrooms' 1/2 → −1/+1;
// ±1 labels are unchanged). Labels that are not one of the codings of two
// classes (-1/+1, 0/1, 1/2), such as -5 and 3, and more than two distinct
// labels are an error.
func (d *Dataset) BinaryLabels() ([]float64, error) {
	distinct := slices.Compact(slices.Sorted(slices.Values(d.Labels)))
	if len(distinct) > 2 {
		return nil, fmt.Errorf("%w: %d distinct labels, want 2", ErrFormat, len(distinct))
	}
	coded := false
	for _, c := range binaryCodings {
		coded = coded || (len(distinct) == 2 && distinct[0] == c[0] && distinct[1] == c[1]) ||
			(len(distinct) == 1 && (distinct[0] == c[0] || distinct[0] == c[1]))
	}
	if len(distinct) > 0 && !coded {
		return nil, fmt.Errorf("%w: labels %v are not two classes coded -1/+1, 0/1 or 1/2", ErrFormat, distinct)
	}
	out := make([]float64, len(d.Labels))
	for r, l := range d.Labels {
		out[r] = 1
		if len(distinct) == 2 && l == distinct[0] {
			out[r] = -1
		}
	}
	return out, nil
}

// Targets returns the labels the ridge problem fits: BinaryLabels when
// the file has two distinct labels (classification data), the labels
// themselves otherwise (regression data).
func (d *Dataset) Targets() []float64 {
	if y, err := d.BinaryLabels(); err == nil && len(slices.Compact(slices.Sorted(slices.Values(d.Labels)))) == 2 {
		return y
	}
	return append([]float64(nil), d.Labels...)
}

// Matrix returns the data as an m×n sparse matrix (m = Rows(), n =
// Features): row r of A is the feature vector of row r of the file. It
// costs O(non-zeros); no dense column is built.
func (d *Dataset) Matrix() *CSC {
	a := &CSC{M: d.Rows(), N: d.Features, ColPtr: make([]int, d.Features+1)}
	for r := range d.Index {
		for _, j := range d.Index[r] {
			a.ColPtr[j+1]++
		}
	}
	for j := range d.Features {
		a.ColPtr[j+1] += a.ColPtr[j]
	}
	nnz := a.ColPtr[d.Features]
	a.RowIdx, a.Val = make([]int, nnz), make([]float64, nnz)
	next := append([]int(nil), a.ColPtr[:d.Features]...)
	for r := range d.Index {
		for k, j := range d.Index[r] {
			a.RowIdx[next[j]], a.Val[next[j]] = r, d.Value[r][k]
			next[j]++
		}
	}
	return a
}
