import CFuzzSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the jobs of Swift's global concurrent executor, and whatever else is handed to `enqueue` (the closures of
/// fuzz-dispatch's event loop, on which the engine's actor runs), on the fuzzing thread, one at a time and in the
/// order they came, so code under test made of tasks and actors runs an input the same way every time: the same
/// interleaving, hence the same coverage, hence (with a fixed `-seed`) the same sequence of inputs from libFuzzer
/// on every machine (docs/fuzzing.md, "In make test").
///
/// It takes over the runtime's `swift_task_enqueueGlobal_hook`: every job for the global executor (a task
/// starting or resuming outside an actor, a default actor getting scheduled) is queued here instead of going to
/// Dispatch's thread pool, and `run(_:)` runs the queue on the calling thread until the operation has finished
/// and nothing is left. Time does not pass during an input: jobs with a delay (`Task.sleep`, the engine's
/// wake-up timer) are held and run, in the order of their due times, once the input has finished and the queue
/// is empty (a sleep cancelled meanwhile then just ends), so whether a timer fires no longer depends on how fast
/// the machine is. What code under test sends to Dispatch's global queues (`DispatchQueue.global().async`) joins
/// this queue as well (`fuzz_divert_global_queues`, Sources/CFuzzSupport); should anything still arrive from
/// another thread during an input, `run` waits a moment at its end for that thread to let go of what it held, so
/// its last steps count for that input. This module is built without coverage instrumentation: whether the queue
/// had to wait is timing, not behaviour of the code under test.
public enum OneThreadExecutor {
    typealias Hook = @convention(c) (UnsafeMutableRawPointer, UnsafeRawPointer?) -> Void
    typealias DelayHook = @convention(c) (UInt64, UnsafeMutableRawPointer, UnsafeRawPointer?) -> Void
    typealias DeadlineHook =
        @convention(c) (
            Int64, Int64, Int64, Int64, CInt, UnsafeMutableRawPointer, UnsafeRawPointer?
        ) -> Void

    /// A job held until the input ends: due `delay` nanoseconds after it was enqueued, `order` breaking ties.
    struct Held {
        var delay: Int64
        var order: Int
        var job: UnsafeMutableRawPointer
    }

    nonisolated(unsafe) static var held: [Held] = []
    nonisolated(unsafe) static var heldCount = 0
    nonisolated(unsafe) static var external = false

    enum Item {
        case job(UnsafeMutableRawPointer)
        case closure(() -> Void)
    }

    nonisolated(unsafe) static var mutex = pthread_mutex_t()
    nonisolated(unsafe) static var condition = pthread_cond_t()
    nonisolated(unsafe) static var items: [Item] = []
    nonisolated(unsafe) static var head = 0
    nonisolated(unsafe) static var finished = true
    nonisolated(unsafe) static var runner: pthread_t?

    /// Installs the hook (once, before the first task starts) and makes the calling thread the one that runs jobs.
    public static func install() {
        guard runner == nil else { return }
        runner = pthread_self()
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "swift_task_enqueueGlobal_hook") else {
            fatalError("swift_task_enqueueGlobal_hook is missing from the Swift runtime")
        }
        let hook: Hook = { job, _ in OneThreadExecutor.append(.job(job)) }
        symbol.assumingMemoryBound(to: Hook?.self).pointee = hook
        let delayHook: DelayHook = { delay, job, _ in
            OneThreadExecutor.hold(job, delay: Int64(clamping: delay))
        }
        hookSymbol("swift_task_enqueueGlobalWithDelay_hook").assumingMemoryBound(to: DelayHook?.self).pointee =
            delayHook
        let deadlineHook: DeadlineHook = { seconds, nanoseconds, _, _, _, job, _ in
            // Continuous or suspending clock: the deadline as nanoseconds from now.
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let delay = (seconds &- Int64(now.tv_sec)) &* 1_000_000_000 &+ (nanoseconds &- Int64(now.tv_nsec))
            OneThreadExecutor.hold(job, delay: max(0, delay))
        }
        hookSymbol("swift_task_enqueueGlobalWithDeadline_hook").assumingMemoryBound(to: DeadlineHook?.self).pointee =
            deadlineHook
        // Work sent to Dispatch's global queues (EngineHost.offLoop) joins the queue too (Sources/CFuzzSupport).
        fuzz_divert_global_queues { run, context in
            guard let run else { return }
            let block = UnsafeMutableRawPointer(context)
            OneThreadExecutor.append(.closure({ run(block) }))
        }
    }

    static func hookSymbol(_ name: String) -> UnsafeMutableRawPointer {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), name) else {
            fatalError("\(name) is missing from the Swift runtime")
        }
        return symbol
    }

    static func hold(_ job: UnsafeMutableRawPointer, delay: Int64) {
        pthread_mutex_lock(&mutex)
        if !onRunner { external = true }
        heldCount += 1
        held.append(Held(delay: delay, order: heldCount, job: job))
        pthread_mutex_unlock(&mutex)
    }

    /// The held job due first, if any.
    static func nextHeld() -> UnsafeMutableRawPointer? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        guard let first = held.indices.min(by: { (held[$0].delay, held[$0].order) < (held[$1].delay, held[$1].order) })
        else { return nil }
        return held.remove(at: first).job
    }

    /// Whether the caller is the thread that runs the queue.
    public static var onRunner: Bool { runner.map { pthread_equal($0, pthread_self()) != 0 } ?? false }

    /// Queues a closure to run on the runner thread after everything queued before it (from any thread).
    public static func enqueue(_ closure: @escaping () -> Void) { append(.closure(closure)) }

    static func append(_ item: Item) {
        pthread_mutex_lock(&mutex)
        if !onRunner { external = true }
        items.append(item)
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
    }

    /// The next item; while the queue is empty, waits up to `timeout` seconds for one (from another thread) until
    /// the operation has finished, or returns nil at once with `timeout` 0.
    static func next(timeout: Int = 0) -> Item? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        if head == items.count, timeout > 0, !finished {
            var deadline = timespec()
            clock_gettime(CLOCK_REALTIME, &deadline)
            deadline.tv_sec += timeout
            while head == items.count, !finished {
                if pthread_cond_timedwait(&condition, &mutex, &deadline) == ETIMEDOUT { break }
            }
        }
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        }
        return item
    }

    static var isFinished: Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return finished
    }

    static func setFinished() {
        pthread_mutex_lock(&mutex)
        finished = true
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
    }

    /// Starts `operation` as a task and runs the queue on this thread until it has returned, then whatever it left
    /// queued (tasks it started and did not wait for).
    public static func run(_ operation: @escaping @Sendable () async -> Void) {
        precondition(onRunner, "OneThreadExecutor.run is called on the thread that installed it")
        pthread_mutex_lock(&mutex)
        finished = false
        external = false
        pthread_mutex_unlock(&mutex)
        Task {
            await operation()
            OneThreadExecutor.setFinished()
        }
        // The generic executor (SerialExecutorRef::generic(), no identity), which global jobs run on.
        let generic = unsafeBitCast((0, 0), to: UnownedSerialExecutor.self)
        func perform(_ item: Item) {
            switch item {
            case .job(let job): unsafeBitCast(job, to: UnownedJob.self).runSynchronously(on: generic)
            case .closure(let closure): closure()
            }
        }
        // Timers wait for the end of the input. Only if the operation waits for one (nothing queued, nothing
        // coming from another thread for a second) does the one due first run early.
        var early = 0
        func fireTimer() -> Bool {
            guard early < 100, let job = nextHeld() else { return false }
            early += 1
            unsafeBitCast(job, to: UnownedJob.self).runSynchronously(on: generic)
            return true
        }
        while !isFinished {
            if let item = next(timeout: 1) {
                perform(item)
            } else if !isFinished {
                // Without a timer to run, a deadlock: libFuzzer reports the input once it exceeds -timeout.
                _ = fireTimer()
            }
        }
        while let item = next() { perform(item) }
        // Then the timers held until now, once each, due first first, each followed by what it set off (a timer
        // set again meanwhile waits for the end of the next input). The service's own was cancelled when it
        // stopped, so running it just ends its sleep.
        pthread_mutex_lock(&mutex)
        let timers = held.sorted { ($0.delay, $0.order) < ($1.delay, $1.order) }
        held.removeAll()
        pthread_mutex_unlock(&mutex)
        for timer in timers {
            unsafeBitCast(timer.job, to: UnownedJob.self).runSynchronously(on: generic)
            while let item = next() { perform(item) }
        }
        pthread_mutex_lock(&mutex)
        let settle = external
        pthread_mutex_unlock(&mutex)
        if settle {
            usleep(2_000)
            while let item = next() { perform(item) }
        }
    }
}
