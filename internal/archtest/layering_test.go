package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is this module's path; the table names packages relative to it.
const module = "github.com/stpis/stpis"

// layer is one package's row: its floor, and the packages of this module it
// may import. Every import must be listed, and a listed package must be on a
// lower floor.
type layer struct {
	floor   int
	imports []string
}

// Floors, from the bottom up.
const (
	tools   = -3 // test helpers that import nothing of the module
	base    = -2 // small utilities under every package: they import nothing of the module
	wire    = -1 // the generated wire code: the contract under everything
	leaf    = 0  // imports no package of this module but the base utilities
	middle  = 1  // clients of the leaves: the bridge client, the event files, the report, the convex figures
	config  = 2  // a run's configuration and its methods (train)
	loop    = 3  // the training loop (train/loop)
	command = 4  // commands: wiring only
)

// layers is the intended import graph, one row per package of the module
// (paths relative to the module). A new edge is a new entry in a row; a
// new package is a new row.
var layers = map[string]layer{
	// The optimizers, the policy, the task facts, the convex problems, the
	// run directory's files and the generated wire code: leaves.
	"ars":                   {leaf, nil},
	"cmaes":                 {leaf, nil},
	"policy":                {leaf, []string{"internal/safefile", "internal/seal"}},
	"stp":                   {leaf, nil},
	"surrogate":             {leaf, nil},
	"tasks":                 {leaf, nil},
	"convex":                {leaf, []string{"internal/safefile"}},
	"convex/data":           {leaf, nil}, // the shipped LIBSVM files, embedded
	"rundir":                {leaf, []string{"internal/safefile", "internal/seal"}},
	"proto/envbridge/v1":    {wire, nil}, // generated: imported only by envclient
	"proto/tensorboard/v1":  {wire, nil}, // generated: imported only by tbevents
	"envclient/localbridge": {leaf, nil},
	"deploy":                {leaf, nil}, // tests of the deployment files only

	// The bridge client, the TensorBoard event files (each over its wire
	// code only), the report, the convex experiments.
	"envclient":      {middle, []string{"proto/envbridge/v1"}},
	"tbevents":       {middle, []string{"proto/tensorboard/v1"}},
	"report":         {middle, []string{"rundir", "tasks"}},
	"convex/figures": {middle, []string{"convex", "convex/data", "stp"}},

	// The training loop.
	"train":      {config, []string{"ars", "cmaes", "envclient", "rundir", "stp", "surrogate", "tasks"}},
	"train/loop": {loop, []string{"envclient", "policy", "rundir", "train"}},

	// The commands, and these tests.
	"cmd/trainer":        {command, []string{"convex/figures", "envclient", "envclient/localbridge", "internal/safefile", "policy", "report", "rundir", "tasks", "tbevents", "train", "train/loop"}},
	"cmd/convex":         {command, []string{"convex/figures"}},
	"bench/bridgebench":  {command, []string{"envclient", "envclient/localbridge"}},
	"bench/matrix":       {command, []string{"tasks"}},
	"bench/power":        {command, []string{"report"}},
	"internal/archtest":  {command, nil}, // tests only
	"internal/fuzzguard": {tools, nil},   // the fuzz targets' hang guard
	"internal/seal":      {base, nil},    // the checksums inside the run and policy files
	"internal/safefile":  {base, nil},    // bounded reads of regular files only
	// writes event files for bridge_py/tests/test_tensorboard_events.py
	"tbevents/internal/cmd/tbwrite": {command, []string{"tbevents"}},
	"tasks/internal/pygen":          {command, []string{"tasks"}}, // go generate ./tasks
}

// testImports are the imports that a package's tests may make beyond its
// row of layers (a test may always import what its package may).
var testImports = map[string][]string{
	"envclient":         {"envclient/localbridge"}, // the end-to-end tests start a real bridge
	"internal/archtest": {"tasks"},                 // the task list check
	// the fuzz targets share their hang guard
	"train/loop":  {"internal/fuzzguard"},
	"rundir":      {"internal/fuzzguard"},
	"report":      {"internal/fuzzguard"},
	"cmd/trainer": {"internal/fuzzguard"},
	// the worker test sends a long episode straight to the bridge it starts
	"envclient/localbridge": {"proto/envbridge/v1"},
}

// pkg is what `go list -json` says of one package.
type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Error        *struct{ Err string }
}

// listModule returns the packages of the module, by path relative to the
// module.
func listModule(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,TestImports,XTestImports,Error", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list: %v", err)
		}
		if p.Error != nil {
			t.Fatalf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs[rel(p.ImportPath)] = p
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no package")
	}
	return pkgs
}

// rel returns path relative to the module, and "" for a path outside it.
func rel(path string) string {
	if r, ok := strings.CutPrefix(path, module+"/"); ok {
		return r
	}
	return ""
}

// ours returns the module's packages among paths, relative to the module,
// sorted, without self.
func ours(self string, paths ...[]string) []string {
	var out []string
	for _, ps := range paths {
		for _, p := range ps {
			if r := rel(p); r != "" && r != self && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	slices.Sort(out)
	return out
}

// allowedText lists the imports a row allows, for a failure message.
func allowedText(imports []string) string {
	if len(imports) == 0 {
		return "no package of this module"
	}
	return strings.Join(imports, ", ")
}

// TestImportsFollowLayers fails on every import, by a package or by its
// tests, that its row of layers does not allow; the message names the edge.
func TestImportsFollowLayers(t *testing.T) {
	pkgs := listModule(t)
	for _, path := range slices.Sorted(maps.Keys(pkgs)) {
		p := pkgs[path]
		row, ok := layers[path]
		if !ok {
			continue // TestEveryPackageHasALayer says so
		}
		for _, imp := range ours(path, p.Imports) {
			if !slices.Contains(row.imports, imp) {
				t.Errorf("forbidden import %s → %s: %s", path, imp, why(path, imp, row.imports))
			}
		}
		allowed := append(slices.Clone(row.imports), testImports[path]...)
		for _, imp := range ours(path, p.TestImports, p.XTestImports) {
			if !slices.Contains(allowed, imp) && !slices.Contains(ours(path, p.Imports), imp) {
				t.Errorf("forbidden import %s → %s in %s's tests: %s", path, imp, path, why(path, imp, allowed))
			}
		}
	}
}

// why says which rule an edge from path to imp breaks.
func why(path, imp string, allowed []string) string {
	from, to := layers[path], layers[imp]
	switch {
	case from.floor == leaf:
		return path + " is a leaf and imports no package of this module"
	case to.floor >= from.floor:
		return "a lower floor imports a higher one or its own (" + imp + " is not below " + path + "); " +
			path + " may import " + allowedText(allowed)
	default:
		return path + " may import " + allowedText(allowed) +
			" (if the design allows this edge, add it to " + path + "'s row of layers in internal/archtest)"
	}
}

// TestEveryPackageHasALayer fails on a package of the module that the table
// does not place, and on a row for a package that no longer exists.
func TestEveryPackageHasALayer(t *testing.T) {
	pkgs := listModule(t)
	for _, path := range slices.Sorted(maps.Keys(pkgs)) {
		if _, ok := layers[path]; !ok {
			t.Errorf("package %s has no row in layers (internal/archtest): give it a floor and its allowed imports", path)
		}
	}
	for _, path := range slices.Sorted(maps.Keys(layers)) {
		if _, ok := pkgs[path]; !ok {
			t.Errorf("layers has a row for %s, which is not a package of this module", path)
		}
	}
}

// TestLayersGoDown checks the table itself: the leaves allow no import, and
// every allowed import, in a package or in its tests, is a package of the
// table on a lower floor.
func TestLayersGoDown(t *testing.T) {
	for _, name := range []string{"stp", "surrogate", "policy", "ars", "tasks"} {
		if layers[name].floor != leaf {
			t.Errorf("%s must be a leaf", name)
		}
	}
	check := func(path string, imports []string, what string) {
		for _, imp := range imports {
			to, ok := layers[imp]
			switch {
			case !ok:
				t.Errorf("layers: %s %s %s, which has no row", path, what, imp)
			case to.floor >= layers[path].floor:
				t.Errorf("layers: %s (floor %d) %s %s (floor %d): edges go down", path, layers[path].floor, what, imp, to.floor)
			}
		}
	}
	for _, path := range slices.Sorted(maps.Keys(layers)) {
		row := layers[path]
		for _, imp := range row.imports {
			if row.floor == leaf && layers[imp].floor != base {
				t.Errorf("layers: %s is a leaf but may import %s", path, imp)
			}
		}
		check(path, row.imports, "may import")
	}
	for _, path := range slices.Sorted(maps.Keys(testImports)) {
		imports := testImports[path]
		if _, ok := layers[path]; !ok {
			t.Errorf("testImports: %s has no row in layers", path)
		}
		check(path, imports, "has tests that may import")
	}
}
