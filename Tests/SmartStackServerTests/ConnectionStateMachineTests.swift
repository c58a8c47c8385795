import SmartStackProtocol
import Testing

@testable import SmartStackServer

/// The connection's state machine without a channel: each transition, event by event, and the actions it gives.
@Suite("Connection state machine")
struct ConnectionStateMachineTests {
    /// A gate the test opens.
    final class Gate: ReplyGate, @unchecked Sendable {
        var isOpen = false
        func whenOpen(_ action: @escaping @Sendable () -> Void) {}
    }

    typealias Machine = ConnectionStateMachine

    static func echo(_ n: Int, oneway: Bool = false) -> String {
        #"{"method":"org.example.test.Echo","parameters":{"n":\#(n)}\#(oneway ? #","oneway":true"# : "")}"#
    }

    /// A started machine.
    static func serving() -> Machine {
        var machine = Machine(maxFrameSize: 4_096)
        _ = machine.started()
        return machine
    }

    /// The `n` an echoed reply carries.
    static func number(_ outcome: CallOutcome) -> Int? {
        guard case .reply(let parameters) = outcome, case .int(let n)? = parameters["n"] else { return nil }
        return Int(n)
    }

    @Test("before the peer is known nothing is read or decoded; started once, then calls decode")
    func starting() throws {
        var machine = Machine(maxFrameSize: 4_096)
        #expect(!machine.wouldWantInput(writable: true))
        machine.receive([Self.echo(1)])
        let v1 = machine.nextCallMethod()
        #expect(v1 == nil)
        let v2 = machine.started()
        #expect(v2)
        let v3 = machine.started()
        #expect(!v3)
        #expect(machine.wouldWantInput(writable: true))
        let v4 = machine.nextCallMethod()
        #expect(v4 == "org.example.test.Echo")
    }

    @Test("calls answered at once are replied in call order; oneway calls get none")
    func servingInOrder() throws {
        var machine = Self.serving()
        machine.receive([Self.echo(1), Self.echo(2, oneway: true), Self.echo(3)])
        let v5 = machine.answerAll()
        #expect(v5 == 3)
        let v6 = machine.replies()
        #expect(v6.map(Self.number) == [1, 3])
        let v7 = machine.afterRepliesIsNone()
        #expect(v7)
    }

    @Test("reading stops while the output is full or the queue holds its limit, and resumes when they clear")
    func readingBackPressure() throws {
        var machine = Self.serving()
        #expect(!machine.wouldWantInput(writable: false))
        machine.receive((0..<Machine.maxQueuedReplies).map { Self.echo($0) })
        let v8 = machine.answerAll()
        #expect(v8 == Machine.maxQueuedReplies)
        #expect(machine.queued == Machine.maxQueuedReplies)
        #expect(!machine.wouldWantInput(writable: true))
        let v9 = machine.replies()
        #expect(v9.count == Machine.maxQueuedReplies)
        #expect(machine.wouldWantInput(writable: true))
    }

    @Test("paused, nothing is decoded or read and an ended input does not close; resumed, the calls that waited go on")
    func pausedDecoding() throws {
        var machine = Self.serving()
        machine.receive([Self.echo(1), Self.echo(2), Self.echo(3)])
        machine.inputEnded()
        let first = machine.nextCallMethod()
        #expect(first == "org.example.test.Echo")
        machine.pauseDecoding()
        #expect(machine.decodingPaused)
        let none = machine.nextCallMethod()
        #expect(none == nil)
        #expect(!machine.wouldWantInput(writable: true))
        let notClosed = machine.afterRepliesIsNone()
        #expect(notClosed, "the calls that wait are answered before the connection closes")
        machine.resumeDecoding()
        let answered = machine.answerAll()
        #expect(answered == 2)
        let replies = machine.replies()
        #expect(replies.map(Self.number) == [2, 3])
        let closes = !machine.afterRepliesIsNone()
        #expect(closes && machine.isClosed)
    }

    @Test("a reply waiting for its gate holds the ones after it; the gate is watched once; it opens, and all follow")
    func gateHoldsLaterReplies() throws {
        var machine = Self.serving()
        let gate = Gate()
        machine.receive([Self.echo(1), Self.echo(2), Self.echo(3)])
        var seen = 0
        let answered = machine.answerAll { _ in
            seen += 1
            guard seen == 2 else { return nil }
            return .waiting(for: gate) { .reply(["n": .int(2)]) }
        }
        #expect(answered == 3)
        let v10 = machine.replies()
        #expect(v10.map(Self.number) == [1])
        guard case .blocked(let first, let watch) = machine.nextReply() else { Issue.record("not blocked"); return }
        #expect(first === gate)
        #expect(!watch)  // `replies()` above already asked to watch it
        let v11 = machine.afterRepliesIsNone()
        #expect(v11)
        gate.isOpen = true
        machine.gateOpened(ObjectIdentifier(gate))
        let v12 = machine.replies()
        #expect(v12.map(Self.number) == [2, 3])
        // A new wait on the same gate is watched again.
        machine.receive([Self.echo(4)])
        let closedGate = Gate()
        _ = machine.answerAll { _ in .waiting(for: closedGate) { .reply([:]) } }
        guard case .blocked(_, let watchAgain) = machine.nextReply() else { Issue.record("not blocked"); return }
        #expect(watchAgain)
    }

    @Test("a call that suspends stops decoding and reading until its outcome comes, which queues in call order")
    func runningTask() throws {
        var machine = Self.serving()
        machine.receive([Self.echo(1), Self.echo(2), Self.echo(3)])
        let v13 = machine.nextCallMethod()
        #expect(v13 != nil)
        let v14 = machine.answer(.done(.reply(["n": .int(1)])))
        #expect(v14 == false)
        let v15 = machine.nextCallMethod()
        #expect(v15 != nil)
        let v16 = machine.answer(.later { .reply(["n": .int(2)]) })
        #expect(v16 == true)
        let v17 = machine.nextCallMethod()
        #expect(v17 == nil)
        #expect(!machine.wouldWantInput(writable: true))
        let v18 = machine.replies()
        #expect(v18.map(Self.number) == [1])
        let v19 = machine.afterRepliesIsNone()
        #expect(v19)
        machine.taskFinished(.reply(["n": .int(2)]), oneway: false)
        #expect(machine.wouldWantInput(writable: true))
        let v20 = machine.answerAll()
        #expect(v20 == 1)
        let v21 = machine.replies()
        #expect(v21.map(Self.number) == [2, 3])
    }

    @Test(
        "a broken frame: what came before is answered, nothing after it, and the connection closes once it is written")
    func brokenFrame() throws {
        var machine = Self.serving()
        let gate = Gate()
        machine.receive([Self.echo(1), "not json", Self.echo(3)])
        let v22 = machine.nextCallMethod()
        #expect(v22 != nil)
        let v23 = machine.answer(.waiting(for: gate) { .reply(["n": .int(1)]) })
        #expect(v23 == false)
        guard case .framingError = machine.nextCall() else { Issue.record("no framing error"); return }
        #expect(machine.input == .broken)
        #expect(machine.held == 0)
        let v24 = machine.nextCallMethod()
        #expect(v24 == nil)
        #expect(!machine.wouldWantInput(writable: true))
        let v25 = machine.replies()
        #expect(v25.isEmpty)
        let v101 = machine.afterRepliesIsNone()  // the reply before the broken frame is still to be written
        #expect(v101)
        gate.isOpen = true
        let v26 = machine.replies()
        #expect(v26.map(Self.number) == [1])
        guard case .close = machine.afterReplies() else { Issue.record("not closing"); return }
        #expect(machine.isClosed)
    }

    @Test("the input ending: what arrived is still decoded and answered, then the connection closes")
    func inputEnded() throws {
        var machine = Self.serving()
        machine.receive([Self.echo(1), Self.echo(2)])
        machine.inputEnded()
        #expect(!machine.wouldWantInput(writable: true))
        let v27 = machine.answerAll()
        #expect(v27 == 2)
        let v28 = machine.replies()
        #expect(v28.map(Self.number) == [1, 2])
        guard case .close = machine.afterReplies() else { Issue.record("not closing"); return }
    }

    @Test(
        "an open stream waits for the replies before it, then holds the connection: later input is dropped, input is read to notice the client leaving"
    )
    func openStream() throws {
        var machine = Self.serving()
        machine.receive([Self.echo(1), #"{"method":"org.example.test.Follow","more":true}"#, Self.echo(3)])
        let v29 = machine.nextCallMethod()
        #expect(v29 != nil)
        _ = machine.answer(.done(.reply(["n": .int(1)])))
        let v30 = machine.nextCallMethod()
        #expect(v30 != nil)
        _ = machine.answer(.done(.stream { _ in }))
        let v102 = machine.nextCallMethod()  // the call after the stream is dropped
        #expect(v102 == nil)
        #expect(machine.held == 0)
        let v31 = machine.replies()
        #expect(v31.map(Self.number) == [1])
        guard case .startStream(.open) = machine.afterReplies() else { Issue.record("no open stream"); return }
        machine.receive([Self.echo(5)])
        #expect(machine.held == 0)
        #expect(machine.wouldWantInput(writable: false))
        machine.inputEnded()
        let v103 = machine.afterRepliesIsNone()  // the stream holds the connection; it closes when the stream ends
        #expect(v103)
    }

    @Test("a pushed stream is known while it waits and runs; closing the channel hands it back to be told")
    func pushedStream() throws {
        var machine = Self.serving()
        let push = FramePush(limit: 8)
        machine.receive([#"{"method":"org.example.test.Follow","more":true}"#])
        let v32 = machine.nextCallMethod()
        #expect(v32 != nil)
        _ = machine.answer(.done(.push(push)))
        #expect(machine.push === push)
        guard case .startStream(.push(let started)) = machine.afterReplies() else { Issue.record("no push"); return }
        #expect(started === push)
        #expect(machine.push === push)
        let v33 = machine.closed()
        #expect(v33 === push)
        #expect(machine.push == nil)
    }

    @Test("a bounded stream keeps the calls after it, reads nothing meanwhile, and they are answered when it ends")
    func boundedStream() throws {
        var machine = Self.serving()
        machine.receive([#"{"method":"org.example.test.Count","more":true}"#, Self.echo(2)])
        let v34 = machine.nextCallMethod()
        #expect(v34 != nil)
        _ = machine.answer(.done(.boundedStream { _ in .reply([:]) }))
        let v35 = machine.nextCallMethod()
        #expect(v35 == nil)
        #expect(!machine.wouldWantInput(writable: true))
        guard case .startStream(.bounded) = machine.afterReplies() else { Issue.record("no bounded stream"); return }
        machine.receive([Self.echo(3)])
        let v36 = machine.nextCallMethod()
        #expect(v36 == nil)
        #expect(!machine.wouldWantInput(writable: true))
        machine.boundedStreamEnded()
        #expect(machine.wouldWantInput(writable: true))
        let v37 = machine.answerAll()
        #expect(v37 == 2)
        let v38 = machine.replies()
        #expect(v38.map(Self.number) == [2, 3])
    }

    @Test("once closed every event is ignored: no input, no calls, no replies, a late task outcome dropped")
    func closed() throws {
        var machine = Self.serving()
        let gate = Gate()
        machine.receive([Self.echo(1), Self.echo(2)])
        let v39 = machine.nextCallMethod()
        #expect(v39 != nil)
        _ = machine.answer(.waiting(for: gate) { .reply([:]) })
        let v40 = machine.nextCallMethod()
        #expect(v40 != nil)
        let v41 = machine.answer(.later { .reply([:]) })
        #expect(v41 == true)
        let v42 = machine.closed()
        #expect(v42 == nil)
        machine.taskFinished(.reply(["n": .int(2)]), oneway: false)
        machine.receive([Self.echo(3)])
        let v43 = machine.nextCallMethod()
        #expect(v43 == nil)
        #expect(machine.queued == 0)
        let v44 = machine.replies()
        #expect(v44.isEmpty)
        #expect(!machine.wouldWantInput(writable: true))
        let v45 = machine.afterRepliesIsNone()
        #expect(v45)
        let v46 = machine.started()
        #expect(!v46)
    }
}

extension ConnectionStateMachine {
    mutating func receive(_ frames: [String]) {
        var bytes: [UInt8] = []
        for frame in frames { bytes += Array(frame.utf8) + [0] }
        bytes.withUnsafeBytes { received($0) }
    }

    /// The next call's method, if one decodes.
    mutating func nextCallMethod() -> String? {
        guard case .call(let call) = nextCall() else { return nil }
        return call.method
    }

    /// Answers with `answer`; whether the machine asked to run it as a task.
    mutating func answer(_ answer: ImmediateOutcome) -> Bool {
        if case .runTask = answered(answer, oneway: false) { return true }
        return false
    }

    /// Answers every call that decodes: with `answer`'s outcome, or by echoing its parameters; how many.
    mutating func answerAll(_ answer: (VarlinkCall) -> ImmediateOutcome? = { _ in nil }) -> Int {
        var count = 0
        while case .call(let call) = nextCall() {
            count += 1
            _ = answered(answer(call) ?? .done(.reply(call.parameters)), oneway: call.oneway)
        }
        return count
    }

    /// The replies that can be written now.
    mutating func replies() -> [CallOutcome] {
        var replies: [CallOutcome] = []
        while case .reply(let outcome) = nextReply() { replies.append(outcome) }
        return replies
    }

    mutating func afterRepliesIsNone() -> Bool {
        if case .none = afterReplies() { return true }
        return false
    }

    var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }
}

/// The machine's queries, on a copy: they are `mutating` (so the connection calls them in place), and `#expect`
/// takes its operands as values.
extension ConnectionStateMachine {
    func wouldWantInput(writable: Bool) -> Bool {
        var copy = self
        return copy.wantsInput(writable: writable)
    }

    var queued: Int {
        var copy = self
        return copy.queuedReplies
    }

    var held: Int {
        var copy = self
        return copy.heldInput
    }
}
