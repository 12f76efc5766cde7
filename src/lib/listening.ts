/**
 * The TCP ports this process's HTTP servers listen on, so that nothing the gateway sends out (a webhook) is aimed
 * back at the gateway itself. Filled by the server as it starts listening, emptied as it closes.
 */
export const listeningPorts = new Set<number>();
