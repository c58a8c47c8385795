import NIOCore
import NIOEmbedded
import Testing

@testable import SmartStackServer

/// A subscription's frames pushed from the loop to an `EmbeddedChannel`: waiting until started, written at once
/// while the socket takes output, queued (up to the limit) while it does not, and the client's leaving told once.
@Suite("Frame push")
struct FramePushTests {
    static func frame(_ text: String) -> [UInt8] { Array(text.utf8) + [0] }

    /// A connected (active) embedded channel.
    static func active() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    static func written(_ channel: EmbeddedChannel) throws -> [String] {
        var frames: [String] = []
        while var buffer = try channel.readOutbound(as: ByteBuffer.self) {
            let text = buffer.readString(length: buffer.readableBytes) ?? ""
            frames += text.split(separator: "\0", omittingEmptySubsequences: true).map(String.init)
        }
        return frames
    }

    @Test(
        "frames sent before the stream starts wait, in order; after it starts they are written at once and flushed at the end of the turn"
    )
    func waitsThenWrites() throws {
        let channel = try Self.active()
        let push = FramePush(limit: 4)
        #expect(push.sendInitial(Self.frame("a")))
        #expect(push.send(Self.frame("b")))
        #expect(try Self.written(channel).isEmpty)
        push.start(on: channel)
        #expect(try Self.written(channel) == ["a", "b"])
        #expect(push.send(Self.frame("c")))
        #expect(push.send(Self.frame("d")))
        // Written at once, flushed (one write for both) when the loop's turn ends.
        #expect(try Self.written(channel).isEmpty)
        channel.embeddedEventLoop.run()
        #expect(try Self.written(channel) == ["c", "d"])
    }

    @Test("initial frames do not count against the limit; more than the limit waiting is a cut-off")
    func limit() throws {
        let push = FramePush(limit: 2)
        for index in 0..<5 { #expect(push.sendInitial(Self.frame("i\(index)"))) }
        #expect(push.send(Self.frame("1")))
        #expect(push.send(Self.frame("2")))
        #expect(!push.send(Self.frame("3")))
    }

    @Test("the client leaving is told once; a close by the service is not told, and closes the channel")
    func endings() throws {
        let channel = try Self.active()
        let push = FramePush(limit: 4)
        var gone = 0
        push.onClientGone = { gone += 1 }
        push.start(on: channel)
        push.connectionClosed()
        push.connectionClosed()
        #expect(gone == 1)
        #expect(!push.send(Self.frame("late")))

        let other = try Self.active()
        let closed = FramePush(limit: 4)
        var told = false
        closed.onClientGone = { told = true }
        closed.start(on: other)
        #expect(other.isActive)
        closed.close()
        closed.connectionClosed()
        #expect(!told)
        #expect(!other.isActive)
    }

    @Test("finish writes what waits, then closes; before the start it waits for the start")
    func finish() throws {
        let channel = try Self.active()
        let push = FramePush(limit: 4)
        #expect(push.send(Self.frame("x")))
        push.finish()
        #expect(channel.isActive)
        push.start(on: channel)
        #expect(try Self.written(channel) == ["x"])
        #expect(!channel.isActive)
    }

    @Test("finish with a last frame writes it after what waits, before the stream started or after")
    func finishWithALastFrame() throws {
        let waiting = try Self.active()
        let early = FramePush(limit: 4)
        #expect(early.send(Self.frame("x")))
        early.finish(with: Self.frame("stopping"))
        early.start(on: waiting)
        #expect(try Self.written(waiting) == ["x", "stopping"])
        #expect(!waiting.isActive)

        let started = try Self.active()
        let late = FramePush(limit: 4)
        late.start(on: started)
        #expect(late.send(Self.frame("y")))
        late.finish(with: Self.frame("stopping"))
        #expect(try Self.written(started) == ["y", "stopping"])
        #expect(!started.isActive)
        #expect(!late.send(Self.frame("after")))
    }
}
