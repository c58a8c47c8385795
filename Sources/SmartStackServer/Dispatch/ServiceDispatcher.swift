public import Logging
public import SmartStackProtocol
import SmartStackCore
import SmartStackStore

/// Routes each call to its handler: one function per method, declared by the interface files.
///
/// Handlers decode their request strictly (errors name the parameter), ask the engine's owner, and encode
/// the reply. Engine errors become the calling interface's typed errors; storage failures become
/// `io.smartstack.Admin.StorageFailed`-style errors of the calling interface.
public struct ServiceDispatcher: CallHandler {
    let host: EngineHost
    let connections: ConnectionRegistry
    let levels: LogLevelControl
    let maxListLimit: Int
    let logger: Logger
    let info: JSONObject
    /// Each interface's `GetInterfaceDescription` reply, encoded once (20 KB for io.smartstack.Shell: encoding it per
    /// call made a pipelined stream of them the cheapest way to keep the loop busy).
    let descriptions: [String: EncodedReply]
    /// Who may make which call.
    let access: AccessControl
    /// Where refused calls are reported (the journal).
    let reporter: any ServiceReporter
    /// The per-app limit on recording calls.
    let rateLimiter: RateLimiter
    /// Decisions encoded as `GetStack` and `Subscribe` replies, once per decision.
    let decisionFrames = DecisionFrames()

    public init(
        host: EngineHost, connections: ConnectionRegistry, levels: LogLevelControl, maxListLimit: Int, logger: Logger,
        access: AccessControl = .unrestricted, reporter: any ServiceReporter = SilentReporter(),
        rateLimiter: RateLimiter = RateLimiter(rate: 0, burst: 1)
    ) {
        self.host = host
        self.rateLimiter = rateLimiter
        self.access = access
        self.reporter = reporter
        self.connections = connections
        self.levels = levels
        self.maxListLimit = maxListLimit
        self.logger = logger
        self.info =
            VarlinkServiceInfo(
                vendor: "smartstackd", product: "smartstackd", version: ServiceVersion.current,
                url: "https://github.com/smartstackd/smartstackd", interfaces: VarlinkInterfaces.all.map(\.name)
            ).wireObject
        var descriptions: [String: EncodedReply] = [:]
        for interface in VarlinkInterfaces.all {
            var frame: [UInt8] = []
            VarlinkReply(parameters: ["description": .string(interface.text)]).encode(into: &frame)
            descriptions[interface.name] = EncodedReply(frame: frame)
        }
        self.descriptions = descriptions
    }

    /// Answers a call from anywhere (tests, fuzzers): the same path as `handleImmediately`, entered on the engine's
    /// loop, then waiting for what it left (a commit, a call that suspends).
    public func handle(_ call: VarlinkCall, peer: PeerCredentials) async -> CallOutcome {
        let answer = await host.perform { _ in Pending(handleImmediately(call, peer: peer)) }
        switch answer {
        case .done(let outcome):
            return outcome
        case .waiting(let gate, let then):
            await withCheckedContinuation { (opened: CheckedContinuation<Void, Never>) in
                gate.whenOpen { opened.resume() }
            }
            return await host.perform { _ in then.value() }
        case .later(let run):
            return await run()
        }
    }

    /// Answers every call on the connection's event loop, which is the engine's actor's executor: reads from the
    /// current state at once, recording calls applied and logged at once and acknowledged when their commit is known
    /// (no task, no thread hop). Only what must suspend (deletions' rebuild off the loop, questions about a past
    /// time, streams' sending) runs as a task (`.later`).
    public func handleImmediately(_ call: VarlinkCall, peer: PeerCredentials) -> ImmediateOutcome? {
        let request: SmartStackRequest
        let admission = admit(
            call, peer: peer, as: call.known,
            decode: { () throws(VarlinkError) in try SmartStackRequest(call: call) }, app: \.actingApp)
        let claimed: AppID?
        switch admission {
        case .admitted(let admitted, let claim):
            request = admitted
            claimed = claim
        case .answered(let outcome): return .done(outcome)
        }
        let context = CallContext(call: call, peer: peer)
        let outcome = host.answer(request, context, by: self)
        // A call that claimed its app and failed gives the claim back: a refused or failed call claims nothing. (The
        // calls answered later, deletions and reads of donations, claim nothing: `admit`.)
        if let claimed {
            switch outcome {
            case .done(.failure):
                access.release(claimed, claimedBy: peer.uid)
            default:
                // What the app recorded before (root's calls, or under a released claim) now counts toward this uid's
                // shares of the global limits, as a restart's recount would count it (next on the loop).
                host.onLoop { $0.recountOwnerShares() }
            }
        }
        return outcome
    }

    /// `ImmediateOutcome` carried out of the host's isolation (its completion is only run back inside it).
    private enum Pending: Sendable {
        case done(CallOutcome)
        case waiting(any ReplyGate, then: UncheckedBox<() -> CallOutcome>)
        case later(@Sendable () async -> CallOutcome)

        init(_ outcome: ImmediateOutcome?) {
            switch outcome {
            case .done(let outcome): self = .done(outcome)
            case .waiting(let gate, let then): self = .waiting(gate, then: UncheckedBox(then))
            case .later(let run): self = .later(run)
            case nil: self = .done(.failure(.methodNotFound("")))  // never: the dispatcher answers every call
            }
        }
    }

    /// Whether a call goes on to its handler, or what it is answered at once.
    private enum Admission<Request> {
        /// Handled next; with the app the call claimed for its caller, if it did.
        case admitted(Request, claimed: AppID?)
        case answered(CallOutcome)
    }

    /// The checks every call passes before it is handled: the caller's role (before the call is decoded, so a
    /// refused caller learns nothing from it), the request's strict decoding, and the app a provider call acts for.
    private func admit<Request>(
        _ call: VarlinkCall, peer: PeerCredentials, as method: SmartStackMethod?,
        decode: () throws(VarlinkError) -> Request, app: (Request) -> AppID?
    ) -> Admission<Request> {
        if case .denied(let reason) = access.authorize(method, peer: peer) {
            return .answered(refuse(call, peer: peer, reason: reason))
        }
        let request: Request
        do {
            request = try decode()
        } catch {
            return .answered(failed(call, error))
        }
        var claimed: AppID?
        if let app = app(request) {
            // A read or a deletion of the app's donations claims nothing.
            let claiming = method != .listDonations && method != .deleteDonations
            switch access.authorize(app: app, peer: peer, claiming: claiming) {
            case .allowed: break
            case .claimed: claimed = app
            case .denied(let reason): return .answered(refuse(call, peer: peer, reason: reason))
            case .appLimit(let maximum):
                return .answered(
                    failed(
                        call,
                        VarlinkError(
                            .limitExceeded(limit: "maxAppsPerUID", maximum: maximum), interface: String(call.interface))
                    ))
            }
            // Recording calls and deletions count against the app's rate limit and the caller uid's, before anything
            // is applied. Root and the service's own uid are trusted (a user service's own user is its only client).
            // A deletion for an app nobody owns counts against the caller's uid only: it claims nothing, and charged
            // to the app it let any uid drain the bucket of an app before the uid that runs it came.
            if let method, method.records || method == .deleteDonations, !access.isSuperuser(peer),
                let refusal = rateLimiter.take(
                    app: method == .deleteDonations && access.isUnownedForOthers(app, peer: peer) ? nil : app,
                    uid: peer.uid)
            {
                if let claimed { access.release(claimed, claimedBy: peer.uid) }
                return .answered(rateLimited(call, refusal))
            }
        } else if let method, method.records, !access.isSuperuser(peer),
            let refusal = rateLimiter.take(app: nil, uid: peer.uid)
        {
            // The shell's recording calls act for no app: they count against the caller's uid, so no shell can flood
            // the log either.
            return .answered(rateLimited(call, refusal))
        }
        return .admitted(request, claimed: claimed)
    }

    /// `RateLimited {limit, retryAfterSeconds}`, naming the configuration key of the limit that refused the call.
    private func rateLimited(_ call: VarlinkCall, _ refusal: RateLimiter.Refusal) -> CallOutcome {
        failed(
            call,
            VarlinkError(
                name: "\(call.interface).RateLimited",
                parameters: [
                    "limit": .string(refusal.limit.rawValue), "retryAfterSeconds": .double(refusal.retryAfter),
                ]))
    }

    /// A call's typed error, logged at debug level.
    func failed(_ call: VarlinkCall, _ error: VarlinkError) -> CallOutcome {
        logger.debug("call failed", metadata: ["method": "\(call.method)", "error": "\(error)"])
        return .failure(error)
    }

    /// `PermissionDenied`, reported to the journal as a refused client.
    private func refuse(_ call: VarlinkCall, peer: PeerCredentials, reason: String) -> CallOutcome {
        reporter.clientRejected(peer, .permissionDenied(method: call.method, reason: reason))
        return .failure(.permissionDenied(reason: reason))
    }

    /// Runs a host operation, mapping its errors to the calling interface's typed errors.
    func host<Result>(
        _ context: CallContext, _ operation: (EngineHost) async throws(HostError) -> Result
    ) async throws(VarlinkError) -> Result {
        do {
            return try await operation(host)
        } catch {
            throw context.error(error)
        }
    }
}

/// A value that is only used inside the isolation it was made in, carried across a boundary that can't tell.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// One call as a handler sees it.
struct CallContext: Sendable {
    var call: VarlinkCall
    var peer: PeerCredentials
    /// The calling interface (whose typed errors the call gets); computed only when an error needs it.
    var interface: String { String(call.interface) }
    var parameters: JSONObject { call.parameters }

    /// The typed wire error for a host failure.
    func error(_ error: HostError) -> VarlinkError {
        switch error {
        case .core(let core): return VarlinkError(core, interface: interface)
        case .store(let failure):
            return VarlinkError(name: "\(interface).StorageFailed", parameters: ["reason": .string(failure.reason)])
        case .stopping:
            return VarlinkError(name: "\(interface).ServiceStopping")
        }
    }
}

extension EngineHost {
    /// The host's answer to a call, from its event loop: `onLoop`'s isolation cast, on a closure that captures nothing
    /// (what it needs comes as arguments). `onLoop` with a capturing closure allocated its context and a thunk, twice
    /// per call (`bench/calls_per_request.sh`: `GetStack` 4 allocations per call before, 1 after).
    fileprivate nonisolated func answer(
        _ request: SmartStackRequest, _ context: CallContext, by dispatcher: ServiceDispatcher
    ) -> ImmediateOutcome? {
        eventLoop.preconditionInEventLoop()
        // The answer's completions run on this loop only, never elsewhere: the box carries it out of the isolation.
        typealias Box = UncheckedBox<ImmediateOutcome?>
        let isolated: (isolated EngineHost, SmartStackRequest, CallContext, ServiceDispatcher) -> Box = {
            host, request, context, dispatcher in Box(dispatcher.answer(request, context, on: host))
        }
        // What the standard library's `assumeIsolated` does once its check passed: the loop is this actor's executor.
        let plain = unsafeBitCast(
            isolated, to: ((EngineHost, SmartStackRequest, CallContext, ServiceDispatcher) -> Box).self)
        return plain(self, request, context, dispatcher).value
    }
}
