package endpoint

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"
)

// makeNodes returns n active nodes 10.0.0.1:8000, 10.0.0.2:8000, ... with weight -1 (absent).
func makeNodes(n int) []Node {
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i] = Node{
			Endpoint: Endpoint{Proto: TCP, Host: "10.0.0." + strconv.Itoa(i+1), Port: 8000, Weight: -1},
			Active:   true,
		}
	}
	return nodes
}

// balancers returns one new balancer of every name, the random one with a fixed seed.
func balancers(t testing.TB) map[string]Balancer {
	t.Helper()
	m := make(map[string]Balancer, len(Names))
	for _, name := range Names {
		b, err := NewBalancer(name)
		if err != nil {
			t.Fatalf("NewBalancer(%q): %v", name, err)
		}
		m[name] = b
	}
	m[nameRandom] = newRandom(1, 2)
	m[nameP2C] = newP2C(3, 4)
	return m
}

func TestNewBalancer(t *testing.T) {
	tests := []struct {
		name     string
		wantType string
		wantErr  string
	}{
		{name: "", wantType: "*endpoint.roundRobin"},
		{name: "roundrobin", wantType: "*endpoint.roundRobin"},
		{name: "weighted", wantType: "*endpoint.weighted"},
		{name: "random", wantType: "*endpoint.random"},
		{name: "hash", wantType: "endpoint.hashBalancer"},
		{name: "consistenthash", wantType: "*endpoint.consistentHash"},
		{name: "least-inflight", wantType: "*endpoint.leastInflight"},
		{name: "p2c", wantType: "*endpoint.p2c"},
		{name: "RoundRobin", wantErr: `endpoint: unknown balancer "RoundRobin" (want one of ["roundrobin" "weighted" "random" "hash" "consistenthash" "least-inflight" "p2c"])`},
		{name: "leastconn", wantErr: `endpoint: unknown balancer "leastconn" (want one of ["roundrobin" "weighted" "random" "hash" "consistenthash" "least-inflight" "p2c"])`},
	}
	for _, tt := range tests {
		b, err := NewBalancer(tt.name)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("NewBalancer(%q) = %T, %v; want error %q", tt.name, b, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("NewBalancer(%q): %v", tt.name, err)
			continue
		}
		if got := fmt.Sprintf("%T", b); got != tt.wantType {
			t.Errorf("NewBalancer(%q) = %s, want %s", tt.name, got, tt.wantType)
		}
	}
}

// TestBalancers runs the contract of Balancer.Pick over every balancer.
func TestBalancers(t *testing.T) {
	tests := []struct {
		name     string
		nodes    []Node
		inactive []int // indexes to mark inactive
		// wantIn lists the indexes Pick may return; nil means "any index in range".
		wantIn []int
	}{
		{name: "empty", nodes: nil, wantIn: []int{-1}},
		{name: "one", nodes: makeNodes(1), wantIn: []int{0}},
		{name: "all active", nodes: makeNodes(4)},
		{name: "one inactive skipped", nodes: makeNodes(4), inactive: []int{2}, wantIn: []int{0, 1, 3}},
		{name: "only one active", nodes: makeNodes(5), inactive: []int{0, 1, 3, 4}, wantIn: []int{2}},
		{name: "all inactive still picks", nodes: makeNodes(3), inactive: []int{0, 1, 2}},
		{name: "single inactive still picks", nodes: makeNodes(1), inactive: []int{0}, wantIn: []int{0}},
	}
	for _, tt := range tests {
		for name, b := range balancers(t) {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				nodes := slices.Clone(tt.nodes)
				for _, i := range tt.inactive {
					nodes[i].Active = false
				}
				for key := uint64(0); key < 200; key++ {
					got := b.Pick(nodes, key*0x9e3779b97f4a7c15)
					if tt.wantIn != nil {
						if !slices.Contains(tt.wantIn, got) {
							t.Fatalf("Pick #%d = %d, want one of %v", key, got, tt.wantIn)
						}
					} else if got < 0 || got >= len(nodes) {
						t.Fatalf("Pick #%d = %d, want an index in [0, %d)", key, got, len(nodes))
					}
				}
			})
		}
	}
}

// TestBalancersSticky checks that the hashing balancers send one key to one node, whatever
// else they are asked in between.
func TestBalancersSticky(t *testing.T) {
	for _, name := range []string{nameHash, nameConsistentHash} {
		t.Run(name, func(t *testing.T) {
			b, _ := NewBalancer(name)
			nodes := makeNodes(7)
			first := make(map[uint64]int)
			for round := 0; round < 3; round++ {
				for key := uint64(0); key < 1000; key++ {
					got := b.Pick(nodes, key)
					if round == 0 {
						first[key] = got
					} else if got != first[key] {
						t.Fatalf("round %d: key %d went to %d, first to %d", round, key, got, first[key])
					}
				}
			}
			// With an inactive node, keys not on it stay put (consistent hash) or at least are
			// deterministic (hash).
			nodes[3].Active = false
			moved := make(map[uint64]int)
			for key := uint64(0); key < 1000; key++ {
				got := b.Pick(nodes, key)
				if got == 3 {
					t.Fatalf("key %d went to the inactive node", key)
				}
				if name == nameConsistentHash && first[key] != 3 && got != first[key] {
					t.Fatalf("key %d moved from %d to %d though its node is active", key, first[key], got)
				}
				moved[key] = got
			}
			for key := uint64(0); key < 1000; key++ {
				if got := b.Pick(nodes, key); got != moved[key] {
					t.Fatalf("key %d went to %d, then %d", key, moved[key], got)
				}
			}
		})
	}
}

func TestRoundRobinExact(t *testing.T) {
	b, _ := NewBalancer(nameRoundRobin)
	nodes := makeNodes(3)
	var got []int
	for range 7 {
		got = append(got, b.Pick(nodes, 0))
	}
	if want := []int{0, 1, 2, 0, 1, 2, 0}; !slices.Equal(got, want) {
		t.Fatalf("picks = %v, want %v", got, want)
	}

	nodes[1].Active = false
	got = got[:0]
	for range 4 {
		got = append(got, b.Pick(nodes, 0))
	}
	if want := []int{2, 0, 2, 0}; !slices.Equal(got, want) {
		t.Fatalf("picks with node 1 inactive = %v, want %v", got, want)
	}

	// The list shrinks under the balancer.
	if got := b.Pick(nodes[:1], 0); got != 0 {
		t.Fatalf("pick from one node = %d, want 0", got)
	}
}

func TestWeightedProportional(t *testing.T) {
	tests := []struct {
		name     string
		weights  []int
		inactive []int
		want     []int // picks per node over sum(want) picks
	}{
		{name: "1:2:3", weights: []int{1, 2, 3}, want: []int{100, 200, 300}},
		{name: "absent counts 100", weights: []int{-1, 50, 100}, want: []int{200, 100, 200}},
		{name: "zero takes nothing", weights: []int{0, 1, 3}, want: []int{0, 150, 450}},
		{name: "all zero share equally", weights: []int{0, 0, 0}, want: []int{100, 100, 100}},
		{name: "inactive skipped", weights: []int{5, 5, 10}, inactive: []int{2}, want: []int{300, 300, 0}},
		{name: "only zero-weight active", weights: []int{0, 7, 0}, inactive: []int{1}, want: []int{150, 0, 150}},
		{name: "none active share equally", weights: []int{1, 2, 9}, inactive: []int{0, 1, 2}, want: []int{100, 100, 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := NewBalancer(nameWeighted)
			nodes := makeNodes(len(tt.weights))
			for i, w := range tt.weights {
				nodes[i].Endpoint.Weight = w
			}
			for _, i := range tt.inactive {
				nodes[i].Active = false
			}
			total := 0
			for _, n := range tt.want {
				total += n
			}
			got := make([]int, len(nodes))
			for range total {
				got[b.Pick(nodes, 0)]++
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("picks per node = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWeightedSmooth(t *testing.T) {
	// Smooth weighted round robin interleaves: 5:1:1 gives a a b a c a a, not a a a a a b c.
	b, _ := NewBalancer(nameWeighted)
	nodes := makeNodes(3)
	for i, w := range []int{5, 1, 1} {
		nodes[i].Endpoint.Weight = w
	}
	var got []int
	for range 7 {
		got = append(got, b.Pick(nodes, 0))
	}
	if want := []int{0, 0, 1, 0, 2, 0, 0}; !slices.Equal(got, want) {
		t.Fatalf("picks = %v, want %v", got, want)
	}
}

func TestRandomUniform(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		inactive []int
	}{
		{name: "all active", n: 5},
		{name: "two inactive", n: 5, inactive: []int{1, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newRandom(42, 7)
			nodes := makeNodes(tt.n)
			for _, i := range tt.inactive {
				nodes[i].Active = false
			}
			const picks = 60000
			got := make([]int, tt.n)
			for range picks {
				got[b.Pick(nodes, 0)]++
			}
			active := tt.n - len(tt.inactive)
			want := picks / active
			for i, c := range got {
				if !nodes[i].Active {
					if c != 0 {
						t.Fatalf("inactive node %d got %d picks", i, c)
					}
					continue
				}
				if math.Abs(float64(c-want)) > 0.05*float64(want) {
					t.Fatalf("node %d got %d picks, want %d ± 5%% (all: %v)", i, c, want, got)
				}
			}
		})
	}
}

func TestHashModulo(t *testing.T) {
	b, _ := NewBalancer(nameHash)
	nodes := makeNodes(4)
	for key := uint64(0); key < 40; key++ {
		if got, want := b.Pick(nodes, key), int(key%4); got != want {
			t.Fatalf("Pick(key %d) = %d, want %d", key, got, want)
		}
	}
	// Node 1 inactive: its keys go to active node key%3 of [0, 2, 3].
	nodes[1].Active = false
	for _, tt := range []struct{ key, want uint64 }{{1, 2}, {5, 3}, {9, 0}, {0, 0}, {2, 2}} {
		if got := b.Pick(nodes, tt.key); got != int(tt.want) {
			t.Fatalf("Pick(key %d) with node 1 inactive = %d, want %d", tt.key, got, tt.want)
		}
	}
}

func TestConsistentHash(t *testing.T) {
	const keys = 20000
	pickAll := func(b Balancer, nodes []Node) []string {
		got := make([]string, keys)
		for k := range got {
			got[k] = nodes[b.Pick(nodes, uint64(k))].Endpoint.Addr()
		}
		return got
	}

	t.Run("balance", func(t *testing.T) {
		b, _ := NewBalancer(nameConsistentHash)
		nodes := makeNodes(10)
		count := make(map[string]int)
		for _, addr := range pickAll(b, nodes) {
			count[addr]++
		}
		for addr, c := range count {
			if c < keys/10*75/100 || c > keys/10*125/100 {
				t.Errorf("%s got %d keys, want %d ± 25%%", addr, c, keys/10)
			}
		}
	})

	t.Run("adding a node moves about 1/n", func(t *testing.T) {
		b, _ := NewBalancer(nameConsistentHash)
		nodes := makeNodes(11)
		before := pickAll(b, nodes[:10])
		after := pickAll(b, nodes)
		added := nodes[10].Endpoint.Addr()
		moved := 0
		for k := range before {
			if before[k] != after[k] {
				moved++
				if after[k] != added {
					t.Fatalf("key %d moved from %s to %s, not to the new node", k, before[k], after[k])
				}
			}
		}
		// Ideal share 1/11 ≈ 9.1%.
		if frac := float64(moved) / keys; frac < 0.05 || frac > 0.14 {
			t.Fatalf("%.1f%% of keys moved, want about %.1f%%", 100*frac, 100.0/11)
		}
	})

	t.Run("order of the list does not matter", func(t *testing.T) {
		b, _ := NewBalancer(nameConsistentHash)
		nodes := makeNodes(6)
		before := pickAll(b, nodes)
		slices.Reverse(nodes)
		after := pickAll(b, nodes)
		if !slices.Equal(before, after) {
			t.Fatal("reversing the node list moved keys")
		}
	})

	t.Run("a changed address rebuilds the ring", func(t *testing.T) {
		b, _ := NewBalancer(nameConsistentHash)
		nodes := makeNodes(3)
		pickAll(b, nodes)
		nodes[1].Endpoint.Host = "10.9.9.9"
		fresh, _ := NewBalancer(nameConsistentHash)
		if !slices.Equal(pickAll(b, nodes), pickAll(fresh, nodes)) {
			t.Fatal("after a host change the balancer disagrees with a fresh one")
		}
	})
}

func BenchmarkPick(b *testing.B) {
	for _, name := range Names {
		b.Run(name, func(b *testing.B) {
			bal, err := NewBalancer(name)
			if err != nil {
				b.Fatal(err)
			}
			nodes := makeNodes(10)
			nodes[3].Active = false
			b.ReportAllocs()
			var key uint64
			for b.Loop() {
				key++
				if bal.Pick(nodes, key) < 0 {
					b.Fatal("no node")
				}
			}
		})
	}
}

// TestLoadBalancers checks what the load-aware balancers do with the load they are given: every
// balancer runs the same table, and each row says where the load-aware ones must send the calls
// (the others are only held to the Pick contract of TestBalancers).
func TestLoadBalancers(t *testing.T) {
	const ms = 1e6
	tests := []struct {
		name     string
		inflight []int
		latency  []float64 // nanoseconds
		inactive []int
		// want[balancer] is the share of 1000 picks (0..1) each node must get within 0.1; a
		// balancer not listed is not checked beyond the contract.
		want map[string][]float64
	}{
		{
			name:     "idle equal nodes share",
			inflight: []int{0, 0, 0, 0}, latency: []float64{ms, ms, ms, ms},
			want: map[string][]float64{nameLeastInflight: {0.25, 0.25, 0.25, 0.25}, nameP2C: {0.25, 0.25, 0.25, 0.25}},
		},
		{
			name:     "least loaded wins",
			inflight: []int{5, 1, 7, 3}, latency: []float64{ms, ms, ms, ms},
			// p2c: node 1 wins every draw it is in (1/2), node 3 wins its draws against 0 and 2
			// (1/3), node 0 against 2 (1/6).
			want: map[string][]float64{nameLeastInflight: {0, 1, 0, 0}, nameP2C: {1.0 / 6, 0.5, 0, 1.0 / 3}},
		},
		{
			name:     "slow node avoided by p2c",
			inflight: []int{2, 2, 0}, latency: []float64{ms, ms, 50 * ms},
			want: map[string][]float64{nameLeastInflight: {0, 0, 1}, nameP2C: {0.5, 0.5, 0}},
		},
		{
			name:     "inactive skipped",
			inflight: []int{0, 9, 9}, latency: []float64{ms, ms, ms}, inactive: []int{0},
			want: map[string][]float64{nameLeastInflight: {0, 0.5, 0.5}, nameP2C: {0, 0.5, 0.5}},
		},
		{
			name:     "unmeasured node charged the floor",
			inflight: []int{0, 30}, latency: []float64{0, 0.05 * ms},
			want: map[string][]float64{nameLeastInflight: {1, 0}, nameP2C: {1, 0}},
		},
	}
	for _, tt := range tests {
		for name, b := range balancers(t) {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				nodes := makeNodes(len(tt.inflight))
				for i := range nodes {
					nodes[i].Inflight, nodes[i].Latency = tt.inflight[i], tt.latency[i]
				}
				for _, i := range tt.inactive {
					nodes[i].Active = false
				}
				got := make([]float64, len(nodes))
				const picks = 1000
				for key := range uint64(picks) {
					i := b.Pick(nodes, key*0x9e3779b97f4a7c15)
					if i < 0 || i >= len(nodes) {
						t.Fatalf("Pick = %d, want an index in [0, %d)", i, len(nodes))
					}
					if slices.Contains(tt.inactive, i) {
						t.Fatalf("Pick = %d, an inactive node", i)
					}
					got[i] += 1.0 / picks
				}
				want, ok := tt.want[name]
				if !ok {
					return
				}
				for i := range want {
					if math.Abs(got[i]-want[i]) > 0.1 {
						t.Fatalf("shares = %.2f, want %.2f", got, want)
					}
				}
			})
		}
	}
}
