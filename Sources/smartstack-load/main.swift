// smartstack-load — drives a running smartstackd (or, for comparison, Redis) over its Unix socket with many
// concurrent clients and reports acknowledged calls per second and latency percentiles. Each client is its own
// connection and keeps `--window` calls in flight (1 = send, wait for the reply, send the next); the clients are
// driven with epoll by `--threads` threads (default 1, as redis-benchmark does), so the generator takes little of
// the machine. Every reply is checked: an error reply fails the run.

runLoad(Options.parse(Array(CommandLine.arguments.dropFirst())))
