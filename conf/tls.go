package conf

import (
	"errors"
	"fmt"
	"os"
)

// TLS holds the TLS settings of ssl endpoints, under TarsCpp's key names. At the top level of
// the file they are the communicator's, for every servant; in [servant."Obj"] each key that is
// set replaces the communicator's for that servant. With none set, an ssl endpoint is verified
// against the system's roots.
//
//	ca = "/etc/tars/ca.pem"      # CA certificates that sign the servers' certificates
//	cert = "/etc/tars/client.pem" # this client's certificate chain, for servers that ask (mutual TLS)
//	key = "/etc/tars/client.key"  # its private key; cert and key go together
//	server-name = "hello.svc"     # the name verified in the server's certificate; default: the endpoint's -h
type TLS struct {
	CA         string `toml:"ca"`
	Cert       string `toml:"cert"`
	Key        string `toml:"key"`
	ServerName string `toml:"server-name"`
}

// IsZero reports whether no key of t is set.
func (t TLS) IsZero() bool { return t == TLS{} }

// Or returns t with every key it leaves empty taken from base: a servant's settings over the
// communicator's. cert and key are taken together, so that a servant's own certificate is never
// paired with the communicator's key.
func (t TLS) Or(base TLS) TLS {
	if t.CA == "" {
		t.CA = base.CA
	}
	if t.Cert == "" && t.Key == "" {
		t.Cert, t.Key = base.Cert, base.Key
	}
	if t.ServerName == "" {
		t.ServerName = base.ServerName
	}
	return t
}

// Check reports the problems of t, each naming its key under prefix ("" for the top level,
// `servant."A.B.C".` for a servant): cert without key or the reverse, and files that cannot be
// read. It does not parse the files: the communicator does when it starts, naming the file.
func (t TLS) Check(prefix string) error {
	var errs []error
	if (t.Cert == "") != (t.Key == "") {
		errs = append(errs, fmt.Errorf("conf: %scert and %skey go together: set both or neither", prefix, prefix))
	}
	for _, f := range []struct{ key, path string }{{"ca", t.CA}, {"cert", t.Cert}, {"key", t.Key}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			errs = append(errs, fmt.Errorf("conf: %s%s = %q: %w", prefix, f.key, f.path, err))
		}
	}
	return errors.Join(errs...)
}

// Auth holds the credentials a client sends on connections to endpoints with -e 1 (TARS
// authentication), under TarsCpp's key names; per servant in [servant."Obj"].
//
//	accesskey = "app-key"
//	secretkey = "app-secret"
type Auth struct {
	AccessKey string `toml:"accesskey"`
	SecretKey string `toml:"secretkey"`
}

// Or returns a with its credentials taken from base if it has none.
func (a Auth) Or(base Auth) Auth {
	if a.AccessKey == "" && a.SecretKey == "" {
		return base
	}
	return a
}

// Check reports an access key without a secret key or the reverse, naming the keys under prefix.
func (a Auth) Check(prefix string) error {
	if (a.AccessKey == "") != (a.SecretKey == "") {
		return fmt.Errorf("conf: %saccesskey and %ssecretkey go together: set both or neither", prefix, prefix)
	}
	return nil
}
