package communicator_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tarscomm/tarscomm/auth"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// testSecret is the secret key of the secrets tests: a value found nowhere else.
const testSecret = "RvwSecretKeyZq7"

// logText renders every entry of logs, message and fields, as JSON lines.
func logText(t *testing.T, logs *observer.ObservedLogs) string {
	t.Helper()
	enc := zapcore.NewJSONEncoder(zap.NewDevelopmentEncoderConfig())
	var b strings.Builder
	for _, e := range logs.All() {
		buf, err := enc.EncodeEntry(e.Entry, e.Context)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(buf.String())
		buf.Free()
	}
	return b.String()
}

// keyMaterial returns the strings of a PEM private key file a leak would show: its base64 lines.
func keyMaterial(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(data)
	if blk == nil {
		t.Fatalf("%s: no PEM block", path)
	}
	b64 := base64.StdEncoding.EncodeToString(blk.Bytes)
	return []string{b64[:32], fmt.Sprintf("%x", blk.Bytes[8:24])}
}

// TestSecretsNotInLogsErrorsDebugPage: a client with TARS credentials (accesskey/secretkey)
// and a client certificate calls an ssl -e 1 and a tcp -e 1 server, right and wrong secret, with
// every logger at debug level; neither the secret key nor the private keys' bytes may appear in
// any log line (client and server), any error returned, or the debug page (HTML and JSON). It
// passed when written: it guards the paths nobody else checks for secrets.
func TestSecretsNotInLogsErrorsDebugPage(t *testing.T) {
	endToEnd(t)
	p := newTLSPKI(t)
	core, logs := observer.New(zap.DebugLevel)
	log := zap.New(core)
	keys := func(ak string) (string, bool) { return testSecret, ak == "app" }

	start := func(withTLS bool) string {
		opts := []server.Option{server.WithLogger(log.Named("server")), server.WithNumEventLoop(1), server.WithAuth(keys)}
		if withTLS {
			cfg, err := tlsconn.ServerConfig(tlsconn.Files{CA: p.ca.File, Cert: p.server.Cert, Key: p.server.Key}, true)
			if err != nil {
				t.Fatal(err)
			}
			opts = append(opts, server.WithTLS(cfg))
		}
		s := server.New(opts...)
		if err := server.HandleProto(s, servant, "SayHello", func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
			return &hellopb.HelloReply{Message: req.GetName() + "@s", Seq: req.GetSeq()}, nil
		}); err != nil {
			t.Fatal(err)
		}
		a, err := s.Start("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = stopServer(t, "server", s) })
		return a.String()
	}
	sslAddr, tcpAddr := start(true), start(false)

	newClient := func(secret string) *communicator.Communicator {
		cfg, err := conf.Parse([]byte(tomlTLS(p.ca.File, `cert = "`+p.user.Cert+`"`, `key = "`+p.user.Key+`"`,
			`accesskey = "app"`, `secretkey = "`+secret+`"`)))
		if err != nil {
			t.Fatal(err)
		}
		faultConf(func(c *conf.Config) { c.LogLevel = "debug" })(&cfg)
		c, err := communicator.New(cfg, communicator.WithLogger(log.Named("client")))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = closeComm(t, c) })
		return c
	}
	good, bad := newClient(testSecret), newClient("Wrong"+testSecret)
	ctx := testCtx(t)
	var errs []error
	for _, ep := range []struct{ proto, addr string }{{"ssl", sslAddr}, {"tcp", tcpAddr}} {
		if _, err := sayHello(ctx, authProxy(t, good, servant, ep.proto, ep.addr), "x", 1); err != nil {
			t.Fatalf("%s call with the right secret: %v", ep.proto, err)
		}
		_, err := sayHello(ctx, authProxy(t, bad, servant, ep.proto, ep.addr), "x", 2)
		if !errors.Is(err, auth.ErrAuth) {
			t.Fatalf("%s call with a wrong secret: %v, want ErrAuth", ep.proto, err)
		}
		errs = append(errs, err)
		// A servant with no credentials of its own, an endpoint without -e 1 to an auth server.
		_, err = sayHello(ctx, proxyToAddrs(t, good, tcpEndpoint(tcpAddr)), "x", 3)
		errs = append(errs, err)
	}

	var page strings.Builder
	for _, url := range []string{"/debug/tarscomm/", "/debug/tarscomm/?format=json"} {
		for _, c := range []*communicator.Communicator{good, bad} {
			rec := httptest.NewRecorder()
			c.DebugHandler().ServeHTTP(rec, httptest.NewRequest("GET", url, nil))
			b, _ := io.ReadAll(rec.Result().Body)
			page.Write(b)
		}
	}
	if !strings.Contains(page.String(), "secretkey") {
		t.Fatalf("the debug page does not show the secretkey setting at all: the check below would prove nothing")
	}

	secrets := append([]string{testSecret}, keyMaterial(t, p.user.Key)...)
	secrets = append(secrets, keyMaterial(t, p.server.Key)...)
	places := map[string]string{"the debug page": page.String(), "the logs": logText(t, logs)}
	for i, err := range errs {
		if err != nil {
			places[fmt.Sprintf("error %d (%v)", i, err)] = err.Error()
		}
	}
	if logs.Len() == 0 {
		t.Fatal("nothing was logged at debug level: the check would prove nothing")
	}
	for where, text := range places {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s shows secret material %q", where, s)
			}
		}
	}
}

// TestSecretsConfigPrintable: Communicator.Config() (and conf.Config, conf.Auth) is what a
// program logs at start to say how it runs ("%+v", zap.Any, json.Marshal). The debug page masks
// secretkey; the value itself printed it in clear in every form before conf.Secret (nothing in
// conf hid it).
func TestSecretsConfigPrintable(t *testing.T) {
	c := newComm(t, func(cfg *conf.Config) {
		cfg.Auth = conf.Auth{AccessKey: "app", SecretKey: testSecret}
	})
	cfg := c.Config()
	if cfg.SecretKey != testSecret {
		t.Fatalf("Config().SecretKey = %q, want the configured key (the value is the API, only its printed forms must hide it)", cfg.SecretKey)
	}
	core, logs := observer.New(zap.DebugLevel)
	zap.New(core).Info("starting", zap.Any("config", cfg), zap.Any("auth", cfg.Auth))
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	forms := map[string]string{
		"%v":                fmt.Sprintf("%v", cfg),
		"%+v":               fmt.Sprintf("%+v", cfg),
		"%#v":               fmt.Sprintf("%#v", cfg),
		"%s of Auth":        fmt.Sprintf("%s", cfg.Auth), //nolint:staticcheck // a struct printed with %s, as log.Printf users do
		"%+v of &Auth":      fmt.Sprintf("%+v", &cfg.Auth),
		"json.Marshal":      string(js),
		"zap.Any (logged)":  logText(t, logs),
		"%+v of a servant":  fmt.Sprintf("%+v", conf.Servant{Auth: conf.Auth{AccessKey: "app", SecretKey: testSecret}}),
		"%+v of an adapter": fmt.Sprintf("%+v", conf.Adapter{Servant: "A.B.Obj", Auth: conf.Auth{AccessKey: "app", SecretKey: testSecret}}),
	}
	for form, text := range forms {
		if strings.Contains(text, testSecret) {
			i := strings.Index(text, testSecret)
			t.Errorf("Communicator.Config() printed with %s shows the secret key: ...%s...; want it masked, as the debug page does", form, text[max(i-30, 0):min(i+len(testSecret)+5, len(text))])
		}
	}
}
