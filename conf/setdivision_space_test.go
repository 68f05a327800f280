package conf

import (
	"strings"
	"testing"
)

// TestSetDivisionWhiteSpaceRefused (accepted in silence before): a set name is "name.area.group" (SetDivisionProblem
// checks the parts), but a part with white space in it passes: "app.sz.1 " (a stray space in
// the file) is accepted, and the client then asks the registry for the objects of set
// "app.sz.1 " and sends that set with its calls, a set no server is in. A servant name with white
// space is refused (nameProblem); a set name must be too, naming setdivision. The same check
// guards Communicator.ProxyWithSet, which calls SetDivisionProblem.
func TestSetDivisionWhiteSpaceRefused(t *testing.T) {
	for _, set := range []string{"app.sz.1 ", "app. sz.1", "app.sz.\t1", " app.sz.1"} {
		_, err := Parse([]byte("enableset = true\nsetdivision = \"" + strings.ReplaceAll(set, "\t", `\t`) + "\"\n"))
		if err == nil || !strings.Contains(err.Error(), "setdivision") {
			t.Errorf("setdivision = %q: Parse error %v; want a refusal naming setdivision "+
				"(white space makes a set no server belongs to)", set, err)
		}
		if p := SetDivisionProblem(set); p == "" {
			t.Errorf("SetDivisionProblem(%q) = \"\"; want a problem (white space in a set name)", set)
		}
	}
}
