package conf

// BalancerNames exposes conf's copy of the balancer names to the external test that compares it
// with objectproxy.Balancers.
var BalancerNames = balancerNames
