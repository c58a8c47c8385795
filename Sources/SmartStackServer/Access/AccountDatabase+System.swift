#if canImport(Glibc)
    import Glibc
#endif

extension AccountDatabase {
    /// The system's user database through NSS (`getpwnam_r`, `getgrnam_r`, `getgrouplist`): what `id` shows.
    public static let system = AccountDatabase(
        uid: { name in
            withPasswd(name: name) { $0.pw_uid }
        },
        gid: { name in
            var group = Glibc.group()
            var result: UnsafeMutablePointer<Glibc.group>?
            var buffer = [CChar](repeating: 0, count: 16_384)
            guard getgrnam_r(name, &group, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
            return group.gr_gid
        },
        groups: { uid, primary in
            var passwd = Glibc.passwd()
            var result: UnsafeMutablePointer<Glibc.passwd>?
            var buffer = [CChar](repeating: 0, count: 16_384)
            guard getpwuid_r(uid, &passwd, &buffer, buffer.count, &result) == 0, result != nil,
                let name = passwd.pw_name
            else { return [primary] }
            var count: Int32 = 64
            var groups = [gid_t](repeating: 0, count: Int(count))
            if getgrouplist(name, primary, &groups, &count) < 0 {
                groups = [gid_t](repeating: 0, count: Int(count))
                guard getgrouplist(name, primary, &groups, &count) >= 0 else { return [primary] }
            }
            return Array(groups.prefix(Int(count)))
        })

    private static func withPasswd<Result>(name: String, _ body: (Glibc.passwd) -> Result) -> Result? {
        var passwd = Glibc.passwd()
        var result: UnsafeMutablePointer<Glibc.passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getpwnam_r(name, &passwd, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return body(passwd)
    }
}
