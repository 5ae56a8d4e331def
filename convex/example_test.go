package convex_test

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/stpis/stpis/convex"
)

func ExampleNewCSC() {
	// A 3×2 matrix with columns (1, 0, 2) and (0, 0, 3).
	a, _ := convex.NewCSC(3, [][]float64{{1, 0, 2}, {0, 0, 3}})
	rows, vals := a.Col(0)
	fmt.Println(a.NNZ(), rows, vals, a.MulVec([]float64{1, 1}))
	// Output:
	// 3 [0 2] [1 2] [1 0 5]
}

func ExampleDataset_Matrix() {
	d, _ := convex.ReadLIBSVM(strings.NewReader("+1 1:0.5 3:1\n-1 2:2\n"))
	a := d.Matrix()
	for j := range a.N {
		rows, vals := a.Col(j)
		fmt.Println(j, rows, vals)
	}
	// Output:
	// 0 [0] [0.5]
	// 1 [1] [2]
	// 2 [0] [1]
}

func ExampleSVM_Solve() {
	d, _ := convex.ReadLIBSVM(strings.NewReader("+1 1:1 2:0.5\n-1 1:-1\n+1 2:1\n-1 1:0.2 2:-2\n"))
	y, _ := d.BinaryLabels()
	p, _ := convex.NewSVM(d.Matrix(), y, 1)
	x, fs, _ := p.Solve(context.Background())
	g := p.Grad(x)
	fmt.Printf("f* = %.6f, |∇f(x*)| < 1e-12: %v\n", fs, math.Abs(g[0]) < 1e-12 && math.Abs(g[1]) < 1e-12)
	// Output:
	// f* = 0.519484, |∇f(x*)| < 1e-12: true
}

func ExampleReadLIBSVM_error() {
	_, err := convex.ReadLIBSVM(strings.NewReader("+1 1:0.5\n-1 2:abc\n"))
	fmt.Println(err)
	// Output:
	// convex: bad LIBSVM data: line 2: bad value "abc"
}
