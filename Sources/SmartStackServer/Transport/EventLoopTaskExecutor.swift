public import NIOCore

/// Runs tasks on one NIO event loop, so a connection's task, its channel's I/O and the engine's actor share
/// a thread: a call goes from the socket through the engine and back without waking another thread.
public final class EventLoopTaskExecutor: TaskExecutor, @unchecked Sendable {
    /// The loop every job runs on.
    public let eventLoop: any EventLoop

    public init(_ eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
