// security-secret-service: `security` linked dynamically, for the commands
// that reach the Secret Service through libsecret; the static `security`
// runs it with the same arguments (SecurityMain).
import SecurityCommand

SecurityMain.run(handsOffSecretService: false)
