// Skills and custom commands in the composer's slash menu (docs/extending.md): `shiro.commands`
// lists them; each is offered after the panel's own commands and sent as a prompt (`/name args`),
// which the server expands for the model.

import type { AgentClient } from './agentClient';
import type { ChatView } from './chatView';
import type { CommandInfo } from './protocol';
import { SLASH_COMMANDS, SlashCommand } from './shared/messages';

/** The panel's commands, then the server's skills and custom commands whose names are not taken. */
export function withCustom(commands: CommandInfo[]): SlashCommand[] {
  const taken = new Set(SLASH_COMMANDS.map((c) => c.name));
  const custom = commands
    .filter((c) => c.source !== 'builtin' && !taken.has(c.name))
    .map((c) => ({ name: c.name, hint: c.argumentHint ?? '', description: `${c.description} (${c.source})`, custom: true }));
  return [...SLASH_COMMANDS, ...custom];
}

/** Ask the server again and give the panel's menu the list (a failure leaves the menu as it was). */
export async function refreshCommands(client: AgentClient, view: ChatView, workspace: string | undefined, tries = 5): Promise<void> {
  try {
    const result = await client.execute('shiro.commands', workspace ? { workspace } : {});
    view.slash = withCustom(result.commands);
    view.post({ t: 'commands', slash: view.slash });
  } catch {
    // An older server without shiro.commands, or one still starting (the panel's first `ready` can
    // come while the server restarts): the built-in list stays, and it is asked again a few times.
    if (tries > 1) setTimeout(() => void refreshCommands(client, view, workspace, tries - 1), 1000);
  }
}
