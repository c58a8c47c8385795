import SmartStackCore
import SmartStackProtocol
import SmartStackServer
import Synchronization
import Testing

@Suite("Access policy")
struct AccessPolicyTests {
    static let accounts = AccountDatabase(
        uid: { ["alice": 1000, "weather": 1002][$0] },
        gid: { ["shells": 500, "staff": 50][$0] },
        groups: { uid, primary in uid == 1001 ? [primary, 500] : [primary] })

    @Test("policy keys in the main configuration: principals by id, name and *, and apps by id")
    func parses() throws {
        let configuration = try ServerConfiguration.parse(
            """
            shells = uid:1000, group:shells  gid:7
            providers = *
            admins = user:alice
            app.org.example.weather = user:weather 1003
            """)
        let policy = configuration.access
        #expect(policy.shells == [.uid(1000), .group("shells"), .gid(7)])
        #expect(policy.providers == [.anyone])
        #expect(policy.admins == [.user("alice")])
        let weather = try AppID("org.example.weather")
        #expect(policy.apps[weather] == [.user("weather"), .uid(1003)])
        let resolved = try policy.resolved(with: Self.accounts)
        #expect(resolved.shells == [.uid(1000), .gid(500), .gid(7)])
        #expect(resolved.admins == [.uid(1000)])
        #expect(resolved.apps[weather] == [.uid(1002), .uid(1003)])
    }

    @Test("defaults: anyone may act as shell and provider, only root as admin")
    func defaults() throws {
        let policy = AccessPolicy()
        #expect(policy.shells == [.anyone])
        #expect(policy.providers == [.anyone])
        #expect(policy.admins.isEmpty)
        #expect(policy.apps.isEmpty)
        let noAdmins = try ServerConfiguration.parse("admins =")
        #expect(noAdmins.access.admins.isEmpty)
    }

    @Test(
        "bad policy lines name the key",
        arguments: [
            ("shells = uid:x", "c:1: shells: 'uid:x' is not"),
            ("admins = root", "c:1: admins: 'root'"),
            ("providers = user:", "c:1: providers:"),
            ("app.not valid = 1", "c:1: app.not valid: 'not valid' is not a valid app id"),
            ("app.org.example.x =", "c:1: app.org.example.x: names nobody"),
            ("shells = group:a/b", "c:1: shells:"),
        ])
    func rejects(text: String, expected: String) {
        #expect {
            _ = try ServerConfiguration.parse(text, source: "c")
        } throws: { error in
            "\(error)".contains(expected)
        }
    }

    @Test("a name the user database does not know is an error naming its key")
    func unknownNames() throws {
        let policy = try ServerConfiguration.parse("\napp.org.example.mail = user:nobody-here", source: "f.conf").access
        #expect {
            _ = try policy.resolved(with: Self.accounts)
        } throws: { error in
            // The file and line too (they were "access policy").
            "\(error)".contains("f.conf:2: app.org.example.mail: no user named 'nobody-here'")
        }
        let shells = try ServerConfiguration.parse("shells = group:ghosts", source: "f.conf").access
        #expect {
            _ = try shells.resolved(with: Self.accounts)
        } throws: { error in
            "\(error)".contains("f.conf:1: shells: no group named 'ghosts'")
        }
    }
}

@Suite("Access control")
struct AccessControlTests {
    static func peer(_ uid: UInt32, gid: UInt32? = nil) -> PeerCredentials {
        PeerCredentials(pid: 42, uid: uid, gid: gid ?? uid)
    }

    static func app(_ name: String) -> AppID {
        do { return try AppID(name) } catch { fatalError("bad app \(name)") }
    }

    static func system(_ text: String) throws -> AccessControl {
        let policy = try ServerConfiguration.parse(text).access.resolved(with: AccessPolicyTests.accounts)
        return AccessControl(mode: .system(policy), serviceUID: 61_234, accounts: AccessPolicyTests.accounts)
    }

    @Test("a user service serves its own user and root, nobody else, whatever the method")
    func userService() {
        let access = AccessControl(mode: .user(owner: 1000), serviceUID: 1000)
        for method in SmartStackMethod.allCases {
            #expect(access.authorize(method, peer: Self.peer(1000)) == .allowed)
            #expect(access.authorize(method, peer: Self.peer(0)) == .allowed)
            #expect(access.authorize(method, peer: Self.peer(1001)) != .allowed)
        }
        #expect(access.authorize(nil, peer: Self.peer(1001)) != .allowed)
        #expect(access.authorize(.getInfo, peer: .unknown) != .allowed)
    }

    @Test("the system policy: introspection open, shell, provider and admin by role")
    func roles() throws {
        let access = try Self.system("shells = gid:500\nproviders = uid:2000\nadmins = user:alice\n")
        let stranger = Self.peer(3000)
        #expect(access.authorize(.getInfo, peer: stranger) == .allowed)
        #expect(access.authorize(.getInterfaceDescription, peer: stranger) == .allowed)
        #expect(access.authorize(.configureStack, peer: stranger) != .allowed)
        #expect(access.authorize(.registerWidget, peer: stranger) != .allowed)
        #expect(access.authorize(.getStatistics, peer: stranger) != .allowed)
        // Shells by primary group, or by a supplementary group from the user database.
        #expect(access.authorize(.configureStack, peer: Self.peer(3001, gid: 500)) == .allowed)
        #expect(access.authorize(.configureStack, peer: Self.peer(1001)) == .allowed)
        // Admins read stacks but do not configure them; shells do not administer.
        #expect(access.authorize(.getStatistics, peer: Self.peer(1000)) == .allowed)
        #expect(access.authorize(.explain, peer: Self.peer(1000)) == .allowed)
        #expect(access.authorize(.configureStack, peer: Self.peer(1000)) != .allowed)
        #expect(access.authorize(.setLogLevel, peer: Self.peer(1001)) != .allowed)
        #expect(access.authorize(.donate, peer: Self.peer(2000)) == .allowed)
        // Root and the service's own uid may do everything; unknown credentials nothing but introspection.
        for method in SmartStackMethod.allCases {
            #expect(access.authorize(method, peer: Self.peer(0)) == .allowed)
            #expect(access.authorize(method, peer: Self.peer(61_234)) == .allowed)
        }
        #expect(access.authorize(.configureStack, peer: .unknown) != .allowed)
    }

    @Test("an app belongs to the first uid that acts for it, unless the policy assigns it")
    func apps() throws {
        let access = try Self.system("providers = *\napp.org.example.weather = user:weather\n")
        let mail = Self.app("org.example.mail")
        let weather = Self.app("org.example.weather")
        #expect(access.authorize(app: mail, peer: Self.peer(2000)) == .claimed)
        #expect(access.owner(of: mail) == 2000)
        #expect(access.authorize(app: mail, peer: Self.peer(2000)) == .allowed)
        #expect(
            access.authorize(app: mail, peer: Self.peer(2001)) == .denied("app org.example.mail belongs to uid 2000"))
        // Root acts for any app and claims none (an administrator's try must not take the app from its uid).
        #expect(access.authorize(app: Self.app("org.example.news"), peer: Self.peer(0)) == .allowed)
        #expect(access.owner(of: Self.app("org.example.news")) == nil)
        #expect(access.authorize(app: Self.app("org.example.news"), peer: Self.peer(2000)) == .claimed)
        #expect(access.authorize(app: mail, peer: Self.peer(0)) == .allowed)
        #expect(access.owner(of: mail) == 2000)
        // A read claims nothing, and reads only an app that is unowned or the caller's.
        #expect(access.authorize(app: Self.app("org.example.read"), peer: Self.peer(2001), claiming: false) == .allowed)
        #expect(access.owner(of: Self.app("org.example.read")) == nil)
        #expect(access.authorize(app: mail, peer: Self.peer(2001), claiming: false) != .allowed)
        // A claim given back (its call failed) leaves the app to the next caller.
        #expect(access.authorize(app: Self.app("org.example.failed"), peer: Self.peer(2001)) == .claimed)
        access.release(Self.app("org.example.failed"), claimedBy: 2001)
        #expect(access.owner(of: Self.app("org.example.failed")) == nil)
        #expect(access.authorize(app: Self.app("org.example.failed"), peer: Self.peer(2000)) == .claimed)
        // An assigned app: its callers only, and nobody claims it.
        #expect(access.authorize(app: weather, peer: Self.peer(2000)) != .allowed)
        #expect(access.authorize(app: weather, peer: Self.peer(1002)) == .allowed)
        #expect(access.owner(of: weather) == nil)
        // A claim stored before the policy assigned the app is not taken: the app no longer counts as that uid's.
        access.restoreClaims([
            weather: 2000, Self.app("org.example.kept"): 2000, Self.app("org.example.roots"): 0,
            Self.app("org.example.services"): 61_234,
        ])
        #expect(access.owner(of: weather) == nil)
        #expect(access.owner(of: Self.app("org.example.kept")) == 2000)
        // Nor root's and the service's (an earlier build stored them; the app's real uid was refused after it).
        #expect(access.owner(of: Self.app("org.example.roots")) == nil)
        #expect(access.owner(of: Self.app("org.example.services")) == nil)
        // The caller of an assigned app passes the role check even when not among the providers.
        let strict = try Self.system("providers =\napp.org.example.weather = uid:1002\n")
        #expect(strict.authorize(.submitTimeline, peer: Self.peer(1002)) == .allowed)
        #expect(strict.authorize(.submitTimeline, peer: Self.peer(2000)) != .allowed)
        #expect(strict.authorize(app: mail, peer: Self.peer(1002)) != .allowed)
    }

    @Test("one uid claims at most maxAppsPerUID apps; its own apps, other uids, root and restored claims as expected")
    func claimLimit() throws {
        let policy = try ServerConfiguration.parse("providers = *\n").access.resolved(with: AccessPolicyTests.accounts)
        let access = AccessControl(
            mode: .system(policy), serviceUID: 61_234, accounts: AccessPolicyTests.accounts, maxAppsPerUID: 2)
        access.restoreClaims([Self.app("org.example.old"): 2000])
        #expect(access.authorize(app: Self.app("org.example.a"), peer: Self.peer(2000)) == .claimed)
        // The restored claim counts: a third app is one too many.
        #expect(access.authorize(app: Self.app("org.example.b"), peer: Self.peer(2000)) == .appLimit(maximum: 2))
        #expect(access.owner(of: Self.app("org.example.b")) == nil)
        // What it owns stays its own; another uid has its own count; root and the service are not counted.
        #expect(access.authorize(app: Self.app("org.example.a"), peer: Self.peer(2000)) == .allowed)
        #expect(access.authorize(app: Self.app("org.example.old"), peer: Self.peer(2000)) == .allowed)
        #expect(access.authorize(app: Self.app("org.example.b"), peer: Self.peer(2001)) == .claimed)
        for index in 0..<5 {
            #expect(access.authorize(app: Self.app("org.example.root\(index)"), peer: Self.peer(0)) == .allowed)
            #expect(access.authorize(app: Self.app("org.example.own\(index)"), peer: Self.peer(61_234)) == .allowed)
        }
        // A user service claims nothing, so it counts nothing.
        let user = AccessControl(mode: .user(owner: 1000), serviceUID: 1000, maxAppsPerUID: 1)
        for index in 0..<3 {
            #expect(user.authorize(app: Self.app("org.example.u\(index)"), peer: Self.peer(1000)) == .allowed)
        }
    }

    /// A claim the store refuses (storage failing) is not kept: it would be lost at a restart, under donations stored
    /// later, and another uid could then claim the app. After a rollback the claims are the stored ones.
    @Test func claimsTheStoreRefusesAreNotKept() throws {
        let policy = try ServerConfiguration.parse("providers = *\n").access.resolved(with: AccessPolicyTests.accounts)
        let access = AccessControl(
            mode: .system(policy), serviceUID: 61_234, accounts: AccessPolicyTests.accounts, maxAppsPerUID: 1)
        let storing = Mutex(false)
        access.recordClaims { _, _ in storing.withLock { $0 } }
        #expect(access.authorize(app: Self.app("org.example.a"), peer: Self.peer(2000)) == .allowed)
        #expect(access.owner(of: Self.app("org.example.a")) == nil, "not stored, not kept")
        // Not counted either: the uid's one app is still free.
        storing.withLock { $0 = true }
        #expect(access.authorize(app: Self.app("org.example.b"), peer: Self.peer(2000)) == .claimed)
        #expect(access.owner(of: Self.app("org.example.b")) == 2000)
        #expect(access.authorize(app: Self.app("org.example.a"), peer: Self.peer(2001)) == .claimed)
        #expect(access.owner(of: Self.app("org.example.a")) == 2001)
        // A rollback: the store holds only b's claim.
        access.resetClaims(to: [Self.app("org.example.b"): 2000])
        #expect(access.owner(of: Self.app("org.example.a")) == nil)
        #expect(access.authorize(app: Self.app("org.example.c"), peer: Self.peer(2000)) == .appLimit(maximum: 1))
    }

    @Test("claims hold over many callers: each app has exactly one owner, the first")
    func claimsInvariant() throws {
        let access = try Self.system("providers = *\n")
        var generator = SeededGenerator(seed: 7)
        var firstOwner: [String: UInt32] = [:]
        for _ in 0..<2_000 {
            let name = "org.example.app\(Int.random(in: 0..<20, using: &generator))"
            let uid = UInt32.random(in: 1000...1005, using: &generator)
            let verdict = access.authorize(app: Self.app(name), peer: Self.peer(uid))
            let owner = firstOwner[name, default: uid]
            firstOwner[name] = owner
            #expect((verdict == .allowed || verdict == .claimed) == (owner == uid))
        }
    }

    @Test("every provider request names its app; no other request does")
    func providerApps() throws {
        let call = try VarlinkCall(
            frame: Array(
                #"{"method":"io.smartstack.Provider.ReloadTimelines","parameters":{"app":"org.example.mail"}}"#.utf8))
        #expect(try SmartStackRequest(call: call).actingApp == Self.app("org.example.mail"))
        let shell = try VarlinkCall(frame: Array(#"{"method":"io.smartstack.Shell.ListStacks"}"#.utf8))
        #expect(try SmartStackRequest(call: shell).actingApp == nil)
    }
}
