package seal

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type doc struct {
	Env    string  `json:"env"`
	Value  float64 `json:"value"`
	SHA256 string  `json:"sha256"`
}

func TestSealAndCheck(t *testing.T) {
	for _, indent := range []bool{false, true} {
		var b []byte
		if indent {
			b, _ = json.MarshalIndent(doc{Env: "Hopper-v1", Value: 3.5}, "", "  ")
		} else {
			b, _ = json.Marshal(doc{Env: "Hopper-v1", Value: 3.5})
		}
		s, err := Seal(b)
		if err != nil {
			t.Fatal(err)
		}
		if sealed, err := Check(s); !sealed || err != nil {
			t.Fatalf("a sealed document: %v, %v\n%s", sealed, err, s)
		}
		var d doc
		if err := json.Unmarshal(s, &d); err != nil || len(d.SHA256) != 64 || d.Value != 3.5 {
			t.Fatalf("sealed document reads back as %+v, %v", d, err)
		}
		// An edit of the same length is caught.
		edited := []byte(strings.Replace(string(s), "3.5", "9.5", 1))
		if sealed, err := Check(edited); !sealed || !errors.Is(err, ErrMismatch) {
			t.Fatalf("an edited document: %v, %v", sealed, err)
		}
		if _, err := Seal(s); err == nil {
			t.Error("sealing a sealed document twice")
		}
	}
	if sealed, err := Check([]byte(`{"env":"Hopper-v1"}`)); sealed || err != nil {
		t.Errorf("an unsealed document: %v, %v", sealed, err)
	}
	if _, err := Seal([]byte(`{"env":"Hopper-v1"}`)); err == nil {
		t.Error("sealing a document without the field")
	}
}
