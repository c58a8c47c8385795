public import SmartStackCore
public import SmartStackProtocol
import Synchronization

/// Decides, for every call, whether its caller — known by the kernel's peer credentials, never by what it
/// says — may make it; and remembers which uid owns each app id (DESIGN.md "Access").
///
/// - Root and the service's own uid may do everything.
/// - A **user** service serves only its own user and root: everyone else is refused every call.
/// - A **system** service follows its ``AccessPolicy``: `org.varlink.service` is open to anyone who can
///   connect; `io.smartstack.Shell` to `shells` (and its read-only methods to `admins`);
///   `io.smartstack.Admin` to `admins`; `io.smartstack.Provider` to `providers` and to the callers of
///   `app.ID` keys, per app: an app the policy assigns belongs to its callers only, any other app to the
///   first uid that acts for it (stored with the state through `recordClaims`, so a restart keeps the claims).
public final class AccessControl: Sendable {
    /// Which rules apply.
    public enum Mode: Sendable, Hashable {
        /// Everything is allowed (tests, tools).
        case unrestricted
        /// A user's own service: only `owner` and root.
        case user(owner: UInt32)
        /// The system service with its resolved policy.
        case system(AccessPolicy)
    }

    /// Whether a call may go ahead.
    public enum Verdict: Sendable, Hashable {
        case allowed
        /// Allowed, and the call claimed the app for its uid (it had no owner): given back with `release` if the
        /// call fails, so a refused or failed call claims nothing.
        case claimed
        /// Refused, and why (for the journal; the caller only sees `PermissionDenied`).
        case denied(String)
        /// The app is unowned and the caller already claimed as many apps as one uid may (`maxAppsPerUID`): the
        /// caller gets `LimitExceeded` naming the key.
        case appLimit(maximum: Int)
    }

    public let mode: Mode

    /// Whether this is the system service (apps are claimed by their first uid).
    public var isSystemMode: Bool {
        if case .system = mode { return true }
        return false
    }
    /// The uid the service runs as; always allowed.
    public let serviceUID: UInt32
    private let accounts: AccountDatabase
    /// Each claimed app's owner, and how many apps each uid owns by claim.
    private struct Claims {
        var owners: [AppID: UInt32] = [:]
        var perUID: [UInt32: Int] = [:]

        /// `app` belongs to `uid` from now on, unless it has an owner already.
        mutating func add(_ app: AppID, to uid: UInt32) {
            guard owners[app] == nil else { return }
            owners[app] = uid
            perUID[uid, default: 0] += 1
        }

        /// `app` no longer belongs to `uid` (if it did).
        mutating func remove(_ app: AppID, from uid: UInt32) {
            guard owners[app] == uid else { return }
            owners[app] = nil
            let left = perUID[uid, default: 1] - 1
            perUID[uid] = left > 0 ? left : nil
        }
    }
    private let claims = Mutex(Claims())
    /// The most apps one uid may claim (`maxAppsPerUID`; root and the service's own uid aside), so no caller can
    /// grow the claims (kept in memory and stored with the state) without bound by inventing app ids.
    public let maxAppsPerUID: Int
    private let claimRecorder = Mutex<(@Sendable (AppID, UInt32) -> Bool)?>(nil)
    private let claimReleaser = Mutex<(@Sendable (AppID, UInt32) -> Void)?>(nil)
    private let groupCache = Mutex<[UInt32: (groups: [UInt32], at: ContinuousClock.Instant)]>([:])

    public init(mode: Mode, serviceUID: UInt32, accounts: AccountDatabase = .system, maxAppsPerUID: Int = 4_096) {
        self.mode = mode
        self.serviceUID = serviceUID
        self.accounts = accounts
        self.maxAppsPerUID = max(1, maxAppsPerUID)
    }

    /// Allows everything.
    public static let unrestricted = AccessControl(mode: .unrestricted, serviceUID: 0)

    /// The check before a call is decoded: may this caller use this method at all?
    ///
    /// `method` is `nil` for a method the service does not know (its error comes from decoding).
    public func authorize(_ method: SmartStackMethod?, peer: PeerCredentials) -> Verdict {
        if isSuperuser(peer) { return .allowed }
        switch mode {
        case .unrestricted:
            return .allowed
        case .user(let owner):
            return peer.uid == owner ? .allowed : .denied("a user service serves only uid \(owner) and root")
        case .system(let policy):
            guard let method else { return .allowed }
            switch method.access {
            case .introspection:
                return .allowed
            case .shellReads, .shellWrites:
                if matches(policy.shells, peer) || (method.access == .shellReads && matches(policy.admins, peer)) {
                    return .allowed
                }
                return .denied("not allowed to act as shell (policy key shells)")
            case .provider:
                if matches(policy.providers, peer) || policy.apps.values.contains(where: { matches($0, peer) }) {
                    return .allowed
                }
                return .denied("not allowed to act as provider (policy keys providers, app.ID)")
            case .admin:
                return matches(policy.admins, peer)
                    ? .allowed : .denied("not allowed to act as admin (policy key admins)")
            }
        }
    }

    /// The check after a provider call is decoded: may this caller act for `app`? With `claiming`, claims an
    /// unowned app for the caller (`.claimed`; the caller gives it back with `release` if the call fails).
    ///
    /// Root and the service's own uid may act for any app and claim none: their calls (an administrator trying an
    /// app, `smartstackctl replay`) must not take an app away from the uid that runs it. An app id belongs to the
    /// first other uid whose call for it succeeds (only the policy's `app.ID` lines say otherwise); a read or a
    /// deletion (`claiming` false: `ListDonations`, `DeleteDonations`) claims nothing: of an app nobody owns, it
    /// finds nothing of the caller's (what the app keeps, root recorded; the dispatcher refuses it then).
    public func authorize(app: AppID, peer: PeerCredentials, claiming: Bool = true) -> Verdict {
        guard case .system(let policy) = mode else { return .allowed }
        if isSuperuser(peer) { return .allowed }
        if let owners = policy.apps[app] {
            return matches(owners, peer)
                ? .allowed : .denied("app \(app.rawValue) belongs to other callers (policy key app.\(app.rawValue))")
        }
        guard matches(policy.providers, peer) else {
            return .denied("not allowed to provide apps the policy does not assign (policy key providers)")
        }
        if !claiming {
            guard let owner = owner(of: app), owner != peer.uid else { return .allowed }
            return .denied("app \(app.rawValue) belongs to uid \(owner)")
        }
        guard let (owner, claimed) = claim(app, for: peer.uid) else { return .appLimit(maximum: maxAppsPerUID) }
        guard owner == peer.uid else { return .denied("app \(app.rawValue) belongs to uid \(owner)") }
        return claimed ? .claimed : .allowed
    }

    /// Whether `peer` is a non-root caller in system mode acting for an app nobody owns (no claim, no `app.ID` line):
    /// what such an app keeps was not recorded by the caller.
    public func isUnownedForOthers(_ app: AppID, peer: PeerCredentials) -> Bool {
        guard case .system(let policy) = mode, !isSuperuser(peer), policy.apps[app] == nil else { return false }
        return owner(of: app) == nil
    }

    /// Gives back a claim `authorize` made for a call that then failed: the app belongs to nobody again, in memory
    /// and in the store (after the claim, in the next commit).
    public func release(_ app: AppID, claimedBy uid: UInt32) {
        let released = claims.withLock { claims -> Bool in
            guard claims.owners[app] == uid else { return false }
            claims.remove(app, from: uid)
            return true
        }
        if released { claimReleaser.withLock { $0 }?(app, uid) }
    }

    /// The owner of `app`, which becomes `uid` when it had none (the claim is then recorded with the state), and
    /// whether this made it so; `nil` when it had none and `uid` already owns `maxAppsPerUID` apps.
    private func claim(_ app: AppID, for uid: UInt32) -> (owner: UInt32, claimed: Bool)? {
        let (owner, claimed) = claims.withLock { claims -> (UInt32?, Bool) in
            if let owner = claims.owners[app] { return (owner, false) }
            let owned = claims.perUID[uid, default: 0]
            if owned >= maxAppsPerUID { return (nil, false) }
            claims.add(app, to: uid)
            return (uid, true)
        }
        if claimed, let record = claimRecorder.withLock({ $0 }), !record(app, uid) {
            // Not stored (storage failing): not kept either, so the next call claims it again. A claim kept only in
            // memory would be lost at a restart, under donations stored later, which another uid could then claim.
            claims.withLock { $0.remove(app, from: uid) }
            return (uid, false)
        }
        return owner.map { ($0, claimed) }
    }

    /// Takes the claims stored before a restart (before the service listens). They count toward their uids'
    /// `maxAppsPerUID`: a uid over it (the limit lowered since) keeps its apps and claims no more. A claim of an app
    /// the policy now assigns (`app.ID`) is not taken: the app is no longer that uid's, for its quotas either; nor is
    /// one by root or the service's own uid.
    public func restoreClaims(_ owners: [AppID: UInt32]) {
        claims.withLock { claims in
            for (app, uid) in owners where !isAssigned(app) && !isTrusted(uid) { claims.add(app, to: uid) }
        }
    }

    /// After a rollback to the stored state: the claims are the stored ones (those queued with the commit that failed
    /// are gone with it).
    public func resetClaims(to owners: [AppID: UInt32]) {
        claims.withLock { claims in
            claims = Claims()
            for (app, uid) in owners where !isAssigned(app) && !isTrusted(uid) { claims.add(app, to: uid) }
        }
    }

    /// Root or the service's own uid, which claim nothing (a claim an earlier build stored for them is not taken:
    /// the app's real uid was refused with "belongs to uid 0" after the upgrade).
    private func isTrusted(_ uid: UInt32) -> Bool { uid == 0 || uid == serviceUID }

    /// Whether the policy assigns `app` (an `app.ID` line): then no claim decides who owns it.
    public func isAssigned(_ app: AppID) -> Bool {
        guard case .system(let policy) = mode else { return false }
        return policy.apps[app] != nil
    }

    /// Has every new claim passed to `record` (which stores it with the state) as it is made; `record` returns
    /// whether it will be stored (false: the claim is dropped). A claim given back is passed to `release`.
    public func recordClaims(
        _ record: @escaping @Sendable (AppID, UInt32) -> Bool,
        release: @escaping @Sendable (AppID, UInt32) -> Void = { _, _ in }
    ) {
        claimRecorder.withLock { $0 = record }
        claimReleaser.withLock { $0 = release }
    }

    /// The uid that owns an app by first registration, if any.
    public func owner(of app: AppID) -> UInt32? {
        claims.withLock { $0.owners[app] }
    }

    /// Every claim: each app a uid claimed (`ListAppOwners`).
    public var owners: [(app: AppID, uid: UInt32)] {
        claims.withLock { claims in claims.owners.map { ($0.key, $0.value) } }
    }

    /// Drops an app's claim whoever made it (`ReleaseApp`, an administrator's remedy); returns the uid that had it.
    public func releaseClaim(of app: AppID) -> UInt32? {
        guard let uid = owner(of: app) else { return nil }
        release(app, claimedBy: uid)
        return uid
    }

    /// Root or the service's own uid: trusted with everything (no policy, no rate limit).
    public func isSuperuser(_ peer: PeerCredentials) -> Bool {
        peer != .unknown && isTrusted(peer.uid)
    }

    private func matches(_ principals: [Principal], _ peer: PeerCredentials) -> Bool {
        guard peer != .unknown else { return false }
        var groups: [UInt32]?
        for principal in principals {
            switch principal {
            case .anyone: return true
            case .uid(let uid): if uid == peer.uid { return true }
            case .gid(let gid):
                if gid == peer.gid { return true }
                if groups == nil { groups = self.groups(of: peer) }
                if groups?.contains(gid) == true { return true }
            case .user, .group:
                continue  // unresolved names match nobody (the daemon resolves them at start)
            }
        }
        return false
    }

    /// The caller's groups from the user database (as D-Bus policies see them), cached for a minute.
    private func groups(of peer: PeerCredentials) -> [UInt32] {
        let now = ContinuousClock.now
        if let cached = groupCache.withLock({ $0[peer.uid] }), now < cached.at + .seconds(60) {
            return cached.groups
        }
        let groups = accounts.groups(peer.uid, peer.gid)
        groupCache.withLock { cache in
            if cache.count > 4_096 { cache.removeAll() }
            cache[peer.uid] = (groups, now)
        }
        return groups
    }
}
