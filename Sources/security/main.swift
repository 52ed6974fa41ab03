// security: the AppHome keychain with macOS security(1) syntax. Statically
// linked in release; commands that need the Secret Service run in
// security-secret-service (SecurityMain).
import SecurityCommand

SecurityMain.run(handsOffSecretService: true)
