package gen

import "testing"

// TestParamNamedServantproxy: a function parameter named servantproxy (a legal TARS and
// C++ name) must give Go that compiles, as parameters named codec, errors or future do: the
// generator renames those (signatureNames) because the proxy methods' bodies name those packages.
// The Future method's body also names package servantproxy (servantproxy.NewFuture), which the
// parameter hid before it was in signatureNames: "servantproxy.NewFuture undefined (type int32
// has no field or method NewFuture)".
func TestParamNamedServantproxy(t *testing.T) {
	mustBuild(t, [2]string{"m.tars", `module M { interface I { int f(int servantproxy); }; };`})
}
