/// The operation codes of prefsd requests (the `op` field).
///
/// Codes are never reused. 32–47 belong to the keychain operations
/// (look-up, add, update, delete for the caller's app); the codes of that
/// range without a case get `unknownOperation` like any code this side
/// does not know.
public enum Operation: Int, Sendable, CaseIterable {
    /// Opens a session: the client names the root it expects.
    case hello = 1
    /// The service's state: pid, root, uptime, counters.
    case status = 2
    /// A whole domain, or one key of it.
    case read = 3
    /// Sets keys of a domain.
    case write = 4
    /// Removes keys of a domain, or the whole domain.
    case delete = 5
    /// Sets and removes keys atomically, if the expected values still hold.
    case batch = 6
    /// The names of the stored domains.
    case listDomains = 7
    /// Pushes a domain's changes to this connection from now on.
    case subscribe = 8
    /// Stops a subscription.
    case unsubscribe = 9
    /// Uninstalls an app (the containers layer's uninstall).
    case uninstall = 10
    /// The identifier of this machine for ByHost domains.
    case hostIdentifier = 11
    /// The file that holds a domain, for messages.
    case location = 12
    /// Keychain look-up for the caller's app (`SecItemCopyMatching`).
    case keychainFind = 32
    /// Adds a keychain item for the caller's app (`SecItemAdd`).
    case keychainAdd = 33
    /// Changes the caller's app's matching items (`SecItemUpdate`).
    case keychainUpdate = 34
    /// Deletes the caller's app's matching items (`SecItemDelete`).
    case keychainDelete = 35
    /// The user locked the keychain (`security lock-keychain`): the service
    /// drops every class key it keeps, the after-first-unlock ones too, and
    /// every credential it has cached. The user's (login) caller only.
    case keychainLocked = 36

    /// Codes kept for the keychain operations: find (32), add (33),
    /// update (34), delete (35), locked (36); 37–47 for later keychain needs.
    public static let reservedForKeychain: ClosedRange<Int> = 32...47
}

/// The error codes of prefsd replies (the `code` field of `error`).
public enum ErrorCode: String, Sendable, CaseIterable {
    /// The frame's protocol version is not spoken here; the connection is closed.
    case unsupportedVersion
    /// The frame announced a payload over the limit; the connection is closed.
    case frameTooLarge
    /// The bytes are not a frame (bad magic or reserved bits); the connection is closed.
    case malformedFrame
    /// The payload is not a binary-plist dictionary with the fields the operation needs.
    case malformedRequest
    /// The operation code is not one this service answers.
    case unknownOperation
    /// The peer's uid is neither the service's nor root's; the connection is closed.
    case permissionDenied
    /// The client expects another AppHome root than the one served.
    case wrongRoot
    /// An expected value of a batch no longer holds; nothing was changed.
    case conflict
    /// The preference store refused or failed; `message` is its text.
    case preferences
    /// The domain's write policy (its settings schema) refused a value;
    /// `message` is the text `defaults` prints. Nothing was written.
    case policyViolation
    /// The containers layer refused or failed; `message` is its text.
    case containers
    /// No such subscription on this connection.
    case noSuchSubscription
    /// A keychain call failed; `status` is its `OSStatus`, `message` its text.
    case keychain
    /// The caller did not prove it acts for the app it names (no credential,
    /// or not that app's); nothing was read or changed.
    case notAuthorized
}
