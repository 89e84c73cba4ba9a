/**
 * `scheme://userinfo@`: a URL's user name and password, which may be credentials, up to the last
 * `@` before the host (a password may hold one). Quotes, commas and brackets end the match, so
 * `"http://host","mail":"a@b"` in a log line is left alone.
 */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#"'<>,()[\]{}]*@/gi;

/**
 * `text` with the user information of every URL in it masked (`https://***@collector:4318`): an
 * endpoint given as `https://user:secret@collector` would otherwise show its password in the log
 * and, through the command line, on every span (`process.command_args`).
 */
export function withoutUrlCredentials(text: string): string {
  return text.replace(URL_USERINFO, '$1***@');
}
