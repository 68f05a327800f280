package file

import "github.com/tarscomm/tarscomm/naming"

// The "file" scheme: "file:///etc/tars/naming.txt" (or "file://relative/path") is Open of the
// path after "file://". The Communicator's naming-file key is its short form.
func init() {
	naming.Register("file", func(t naming.Target, env naming.Env) (naming.Source, error) {
		return Open(t.Rest, env.Log)
	})
}
