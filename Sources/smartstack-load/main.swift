// smartstack-load — drives a running smartstackd over its socket with many concurrent clients and reports
// acknowledged calls per second and latency percentiles. Each client is a thread with a blocking socket that
// keeps `--window` calls in flight (1 = send, wait for the reply, send the next).

runLoad(Options.parse(Array(CommandLine.arguments.dropFirst())))
