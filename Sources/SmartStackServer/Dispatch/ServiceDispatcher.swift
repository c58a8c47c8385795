public import Logging
public import SmartStackProtocol
import SmartStackCore

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
    /// Who may make which call.
    let access: AccessControl
    /// Where refused calls are reported (the journal).
    let reporter: any ServiceReporter

    public init(
        host: EngineHost, connections: ConnectionRegistry, levels: LogLevelControl, maxListLimit: Int, logger: Logger,
        access: AccessControl = .unrestricted, reporter: any ServiceReporter = SilentReporter()
    ) {
        self.host = host
        self.access = access
        self.reporter = reporter
        self.connections = connections
        self.levels = levels
        self.maxListLimit = maxListLimit
        self.logger = logger
        self.info = VarlinkServiceInfo(
            vendor: "smartstackd", product: "smartstackd", version: ServiceVersion.current,
            url: "https://github.com/smartstackd/smartstackd", interfaces: VarlinkInterfaces.all.map(\.name)
        ).wireObject
    }

    public func handle(_ call: VarlinkCall, peer: PeerCredentials) async -> CallOutcome {
        // The role is checked before the call is decoded, so a refused caller learns nothing from it.
        if case .denied(let reason) = access.authorize(SmartStackMethod(rawValue: call.method), peer: peer) {
            return refuse(call, peer: peer, reason: reason)
        }
        let context = CallContext(call: call, peer: peer)
        do {
            let request = try SmartStackRequest(call: call)
            if let app = request.providerApp, case .denied(let reason) = access.authorize(app: app, peer: peer) {
                return refuse(call, peer: peer, reason: reason)
            }
            return try await handle(request, context)
        } catch {
            logger.debug("call failed", metadata: ["method": "\(call.method)", "error": "\(error)"])
            return .failure(error)
        }
    }

    /// Answers a donation on the connection's event loop, which is the engine's actor's executor: the donation is
    /// applied and logged at once and acknowledged when its commit is known, with no task and no thread hop.
    /// Every other call goes to `handle`.
    public func handleImmediately(_ call: VarlinkCall, peer: PeerCredentials) -> ImmediateOutcome? {
        guard !call.more, call.method == SmartStackMethod.donate.rawValue else { return nil }
        if case .denied(let reason) = access.authorize(.donate, peer: peer) {
            return .done(refuse(call, peer: peer, reason: reason))
        }
        let context = CallContext(call: call, peer: peer)
        let request: DonateRequest
        do {
            request = try DonateRequest(parameters: call.parameters)
        } catch {
            logger.debug("call failed", metadata: ["method": "\(call.method)", "error": "\(error)"])
            return .done(.failure(error))
        }
        if case .denied(let reason) = access.authorize(app: request.app, peer: peer) {
            return .done(refuse(call, peer: peer, reason: reason))
        }
        let donation = request.donation(defaultTime: host.now(), generatedID: "generated")
        let idGiven = request.id != nil
        let host = self.host
        let logged = host.assumeIsolated { host in
            Result { () throws(HostError) in try host.donateNow(donation, idGiven: idGiven) }
        }
        switch logged {
        case .failure(let error):
            return .done(.failure(context.error(error)))
        case .success(let (id, ticket)):
            return .afterCommit(ticket) { outcome in
                guard let error = host.assumeIsolated({ $0.acknowledged(outcome) }) else {
                    return .reply(DonateRequest.reply(id: id))
                }
                return .failure(context.error(error))
            }
        }
    }

    /// `PermissionDenied`, reported to the journal as a refused client.
    private func refuse(_ call: VarlinkCall, peer: PeerCredentials, reason: String) -> CallOutcome {
        reporter.clientRejected(peer, .permissionDenied(method: call.method, reason: reason))
        return .failure(.permissionDenied())
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

/// The service's version, reported by `GetInfo`.
public enum ServiceVersion {
    public static let current = "0.3.0"
}
