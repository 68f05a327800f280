package conf

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
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
//	tls-min-version = "1.2"       # the oldest TLS version spoken: "1.2" (default) or "1.3" (then no tls-ciphers)
//	tls-ciphers = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256:TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
type TLS struct {
	CA         string `toml:"ca"`
	Cert       string `toml:"cert"`
	Key        string `toml:"key"`
	ServerName string `toml:"server-name"`
	TLSVersions
}

// TLSVersions holds the protocol settings of a TLS side, client or server: tls-min-version and
// tls-ciphers. Both are optional; Parse turns them into crypto/tls values.
type TLSVersions struct {
	// MinVersion is the oldest TLS version spoken: "1.2" or "1.3". "" is 1.2.
	MinVersion string `toml:"tls-min-version"`

	// Ciphers lists the cipher suites offered or accepted for TLS 1.2, by their IANA names as Go
	// spells them (crypto/tls's CipherSuiteName: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
	// separated by ':' or ',' as OpenSSL's cipher lists are. "" is Go's default list. TLS 1.3's
	// suites are not configurable in Go (all of them are secure) and are refused here, as are
	// the suites crypto/tls calls insecure.
	Ciphers string `toml:"tls-ciphers"`
}

// Parse returns the crypto/tls values of v: the minimum version (tls.VersionTLS12 for "") and the
// cipher suites (nil for ""). Errors name the key under prefix.
func (v TLSVersions) Parse(prefix string) (minVersion uint16, suites []uint16, err error) {
	switch v.MinVersion {
	case "", "1.2":
		minVersion = tls.VersionTLS12
	case "1.3":
		minVersion = tls.VersionTLS13
	default:
		return 0, nil, fmt.Errorf("conf: %stls-min-version = %q: must be \"1.2\" or \"1.3\"", prefix, v.MinVersion)
	}
	if strings.TrimSpace(v.Ciphers) == "" {
		return minVersion, nil, nil
	}
	known := make(map[string]*tls.CipherSuite)
	for _, cs := range tls.CipherSuites() {
		known[cs.Name] = cs
	}
	var errs []error
	for _, name := range strings.FieldsFunc(v.Ciphers, func(r rune) bool { return r == ':' || r == ',' || r == ' ' }) {
		cs := known[name]
		switch {
		case cs == nil:
			problem := "unknown cipher suite (names as Go's crypto/tls spells them, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)"
			for _, ins := range tls.InsecureCipherSuites() {
				if ins.Name == name {
					problem = "an insecure cipher suite"
				}
			}
			errs = append(errs, fmt.Errorf("conf: %stls-ciphers: %s: %s", prefix, name, problem))
		case !supports12(cs):
			errs = append(errs, fmt.Errorf("conf: %stls-ciphers: %s: a TLS 1.3 suite, which Go does not let a configuration choose", prefix, name))
		default:
			suites = append(suites, cs.ID)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return 0, nil, err
	}
	if minVersion == tls.VersionTLS13 {
		return 0, nil, fmt.Errorf("conf: %stls-ciphers: TLS 1.3 suites are not configurable: drop tls-ciphers or set tls-min-version = \"1.2\"", prefix)
	}
	return minVersion, suites, nil
}

// supports12 reports whether cs can be used with TLS 1.2.
func supports12(cs *tls.CipherSuite) bool {
	for _, v := range cs.SupportedVersions {
		if v == tls.VersionTLS12 {
			return true
		}
	}
	return false
}

// Or returns v with each key it leaves empty taken from base.
func (v TLSVersions) Or(base TLSVersions) TLSVersions {
	if v.MinVersion == "" {
		v.MinVersion = base.MinVersion
	}
	if v.Ciphers == "" {
		v.Ciphers = base.Ciphers
	}
	return v
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
	t.TLSVersions = t.TLSVersions.Or(base.TLSVersions)
	return t
}

// Check reports the problems of t, each naming its key under prefix ("" for the top level,
// `servant."A.B.C".` for a servant): cert without key or the reverse, files that cannot be
// read, a bad tls-min-version or tls-ciphers. It does not parse the files: the communicator does
// when it starts, naming the file.
func (t TLS) Check(prefix string) error {
	return checkTLSFiles(prefix, t.CA, t.Cert, t.Key, t.TLSVersions)
}

// checkTLSFiles is Check for one side's files and versions.
func checkTLSFiles(prefix, ca, cert, key string, v TLSVersions) error {
	var errs []error
	if (cert == "") != (key == "") {
		errs = append(errs, fmt.Errorf("conf: %scert and %skey go together: set both or neither", prefix, prefix))
	}
	for _, f := range []struct{ key, path string }{{"ca", ca}, {"cert", cert}, {"key", key}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			errs = append(errs, fmt.Errorf("conf: %s%s = %q: %w", prefix, f.key, f.path, err))
		}
	}
	if _, _, err := v.Parse(prefix); err != nil {
		errs = append(errs, err)
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
	SecretKey Secret `toml:"secretkey"`
}

// Secret is a credential. It prints as "(set, not shown)" (or "" when empty) however it is
// formatted (%v, %+v, %#v, %s, %q), and so it goes into JSON and text too (zap's fields, a
// printed or logged configuration): only string(s) gives its value. A Config written out with a
// TOML or JSON encoder thus holds the mask in its place, and reading that back fails
// (UnmarshalText) rather than take the mask for the secret: copy a Config with Clone.
type Secret string

// secretMask is what a set Secret shows.
const secretMask = "(set, not shown)"

// String returns "(set, not shown)", or "" for an empty secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return secretMask
}

// UnmarshalText sets s to text, and refuses the mask a Secret is written out as: a
// configuration that went through an encoder has lost its secret.
func (s *Secret) UnmarshalText(text []byte) error {
	if string(text) == secretMask {
		return errors.New("conf: a secret written out masked cannot be read back: give the secret itself")
	}
	*s = Secret(text)
	return nil
}

// GoString is String, quoted.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// MarshalText is String: JSON and text encoders show no secret.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

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
