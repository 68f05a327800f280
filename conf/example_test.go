package conf_test

import (
	"fmt"

	"github.com/tarscomm/tarscomm/conf"
)

func ExampleParse() {
	cfg, err := conf.Parse([]byte(`
netthread = 2
sync-invoke-timeout = "1500ms"

[servant."Hello.Server.GreeterObj"]
load-balance = "consistenthash"
retries = 1
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.NetThread, cfg.AsyncThread, cfg.SyncInvokeTimeout)
	fmt.Printf("%+v\n", cfg.ForServant("Hello.Server.GreeterObj"))

	_, err = conf.Parse([]byte("netthread = 0\n[health]\ntry-interval = \"1x\"\n"))
	fmt.Println(err)
	_, err = conf.Parse([]byte("netthread = 0\nnetthreads = 2\n"))
	fmt.Println(err)
	// Output:
	// 2 3 1.5s
	// {SyncInvokeTimeout:1.5s AsyncInvokeTimeout:5s LoadBalance:consistenthash Retries:1 Connections:1 ShortConnections:false MaxInflight:0 BackupRequest:0s BackupBudget:0.1 Idempotent:[] RetryBudget:0 RetryBudgetMin:0 CircuitBreaker:false TLS:{CA: Cert: Key: ServerName: TLSVersions:{MinVersion: Ciphers:}} Auth:{AccessKey: SecretKey:}}
	// conf: toml: line 3 (last key "health.try-interval"): invalid duration: "1x"
	// conf: unknown key netthreads (did you mean netthread?)
}
