// libFuzzer target (b): request decoding and dispatch. The input is a Varlink byte stream (NUL-terminated JSON
// calls, as a client writes them); each call is decoded and handled by the real ServiceDispatcher and EngineHost,
// with an in-memory event log and a fixed clock, as the service does after reading it from a socket. Built only
// by `make fuzz` (-DSMARTSTACK_FUZZ, -sanitize=fuzzer,address); see docs/fuzzing.md.
#if SMARTSTACK_FUZZ
    import FuzzSupport
    #if canImport(Glibc)
        import Glibc
    #endif
    import Dispatch
    import Logging
    import NIOCore
    import SmartStackCore
    import SmartStackProtocol
    import SmartStackServer
    import SmartStackStore

    /// SwiftPM links an executable's entry point as `<module>_main`: it hands over to libFuzzer (`runLibFuzzer`).
    @_cdecl("fuzz_dispatch_main")
    public func fuzzDispatchMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
        // Lazily built globals (the parsed interface files, ...) are made once before fuzzing, so libFuzzer's leak
        // check does not take their first use for a leak of that input.
        // Every task and actor job runs on the fuzzing thread, in order, so an input runs the same way each time.
        OneThreadExecutor.install()
        // Off-loop work (deletions, past questions) on the global queue, which the executor diverts onto its thread.
        EngineHost.runOffLoopWorkOnGlobalQueue()
        let warmUp = DispatchFuzzer.warmUp.joined(separator: "\0") + "\0"
        _ = Array(warmUp.utf8).withUnsafeBytes { bytes in
            bytes.baseAddress.map { fuzzDispatch($0, bytes.count) }
        }
        return runLibFuzzer(argc, argv) { start, size in fuzzDispatch(start, size) }
    }

    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzDispatch(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
        let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
        OneThreadExecutor.run { await DispatchFuzzer.run(bytes) }
        return 0
    }

    /// The service's clock stopped at one instant, so a run depends on its input alone.
    struct FixedClock: ServiceClock {
        /// 2024-03-04T08:00:00-08:00.
        static let start = Timestamp(microseconds: 1_709_568_000_000_000, utcOffsetSeconds: -8 * 3_600)

        func now() -> Timestamp { Self.start }
    }

    /// The event loop the engine's actor runs on (`EngineHost.unownedExecutor`): its tasks join the fuzzing thread's
    /// one queue (`OneThreadExecutor`) instead of a NIO thread, so the actor's jobs and the global executor's run in
    /// one order, the order they were enqueued. Scheduled tasks wait on a Dispatch timer, then join the queue. It is
    /// its own `SerialExecutor` (NIO's default wraps a loop in a new object on each use, which an unowned executor
    /// reference outlives).
    final class FuzzEventLoop: NIOSerialEventLoopExecutor, @unchecked Sendable {
        var inEventLoop: Bool { OneThreadExecutor.onRunner }

        func execute(_ task: @escaping @Sendable () -> Void) { OneThreadExecutor.enqueue(task) }

        func scheduleTask<T>(deadline: NIODeadline, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
            scheduleTask(in: deadline - .now(), task)
        }

        func scheduleTask<T>(in delay: TimeAmount, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
            let promise: EventLoopPromise<T> = makePromise()
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(max(0, delay.nanoseconds)))) {
                self.execute {
                    do { promise.assumeIsolated().succeed(try task()) } catch { promise.fail(error) }
                }
            }
            return Scheduled(promise: promise) { promise.fail(EventLoopError.cancelled) }
        }

        func preconditionInEventLoop(file: StaticString, line: UInt) {
            precondition(inEventLoop, "not on the fuzzing thread", file: file, line: line)
        }

        func preconditionNotInEventLoop(file: StaticString, line: UInt) {
            precondition(!inEventLoop, "on the fuzzing thread", file: file, line: line)
        }

        func shutdownGracefully(queue: DispatchQueue, _ callback: @escaping @Sendable ((any Error)?) -> Void) {
            queue.async { callback(nil) }
        }
    }

    enum DispatchFuzzer {
        static let eventLoop = FuzzEventLoop()
        static let logger = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }
        static let peer = PeerCredentials(pid: 4_242, uid: 1_000, gid: 1_000)
        static let warmUp = [
            #"{"method":"org.varlink.service.GetInfo"}"#,
            #"{"method":"org.varlink.service.GetInterfaceDescription","parameters":{"interface":"io.smartstack.Shell"}}"#,
            #"{"method":"io.smartstack.Provider.Donate","parameters":{"app":"com.example.weather","intent":"open"}}"#,
            #"{"method":"io.smartstack.Shell.GetStack","parameters":{"stack":"home"}}"#,
            #"{"method":"io.smartstack.Shell.Explain","parameters":{"stack":"home","instance":"weather-1"}}"#,
            #"{"method":"io.smartstack.Shell.Subscribe","parameters":{"stacks":["home"]},"more":true}"#,
            #"{"method":"io.smartstack.Admin.GetStatistics"}"#,
            #"{"method":"io.smartstack.Shell.Nope"}"#,
        ]

        /// A fresh service holding one registered kind and a stack `home` (so fuzzed calls can name real ids),
        /// then every call of the input in order; streams are read until the host stops.
        static func run(_ bytes: [UInt8]) async {
            let host = EngineHost(
                settings: EngineSettings(), clock: FixedClock(), log: InMemoryEventLog(), logger: logger,
                eventLoop: eventLoop)
            do {
                _ = try await host.restore()
                try await prepare(host)
            } catch {
                fatalError("the fuzzing service does not start: \(error)")
            }
            let dispatcher = ServiceDispatcher(
                host: host, connections: ConnectionRegistry(limit: 16), levels: LogLevelControl(.info),
                maxListLimit: 100, logger: logger)
            var decoder = VarlinkFrameDecoder(maxFrameSize: 65_536)
            decoder.append(bytes)
            var streams: [Task<Void, Never>] = []
            while let frame = try? decoder.next() {
                // A bad envelope closes the connection: the rest of the stream is never read.
                guard let call = try? VarlinkCall(frame: frame) else { break }
                switch await dispatcher.handle(call, peer: peer) {
                case .reply(let parameters):
                    encode(VarlinkReply(parameters: parameters))
                case .failure(let error):
                    encode(VarlinkReply(error: error))
                case .encoded(let reply):
                    // Decodes as a reply, as the client would read it.
                    guard reply.frame.last == 0, (try? VarlinkReply(frame: Array(reply.frame.dropLast()))) != nil else {
                        fatalError("an encoded reply does not decode: \(String(decoding: reply.frame, as: UTF8.self))")
                    }
                case .stream(let run):
                    streams.append(
                        Task {
                            try? await run { parameters in encode(VarlinkReply(parameters: parameters, continues: true))
                            }
                        })
                case .push(let frames):
                    // Pushed from the loop once a connection starts it; here nobody reads it: dropped.
                    await host.perform { _ in frames.close() }
                case .boundedStream(let run):
                    // The service's dispatcher makes none today; run like a stream, its last outcome a plain reply.
                    streams.append(
                        Task {
                            let last = try? await run { parameters in
                                encode(VarlinkReply(parameters: parameters, continues: true))
                            }
                            if case .reply(let parameters)? = last { encode(VarlinkReply(parameters: parameters)) }
                            if case .failure(let error)? = last { encode(VarlinkReply(error: error)) }
                        })
                }
            }
            await host.stop()
            for stream in streams { await stream.value }
        }

        static func prepare(_ host: EngineHost) async throws(HostError) {
            let now = FixedClock.start
            do {
                let app = try AppID("com.example.weather")
                let kind = try WidgetKindID(app: app, kind: "main")
                _ = try await host.record(
                    .registerKind(
                        try WidgetKind(
                            id: kind, displayName: "Weather", families: [.systemMedium, .systemSmall], intent: nil,
                            predictionMappings: []),
                        at: now))
                _ = try await host.record(
                    .configureStack(
                        StackConfiguration(
                            id: try StackID("home"), family: .systemMedium,
                            widgets: [WidgetPlacement(instance: try InstanceID("weather-1"), kind: kind)]),
                        at: now))
            } catch let error as HostError {
                throw error
            } catch {
                fatalError("bad fixture: \(error)")
            }
        }

        /// Every reply must be writable as a frame the client's decoder reads back.
        static func encode(_ reply: VarlinkReply) {
            var buffer: [UInt8] = []
            reply.encode(into: &buffer)
            guard buffer.last == 0, (try? VarlinkReply(frame: Array(buffer.dropLast()))) != nil else {
                fatalError("a reply does not decode: \(String(decoding: buffer, as: UTF8.self))")
            }
        }
    }
#else
    /// Without the fuzzing build there is nothing to run: see docs/fuzzing.md.
    @main enum FuzzDispatchUnavailable {
        static func main() { print("fuzz-dispatch is a libFuzzer target: run `make fuzz` (docs/fuzzing.md)") }
    }
#endif
