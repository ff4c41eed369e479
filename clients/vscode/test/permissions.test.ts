// Issue 39 (cli39), the VS Code side's pure parts: the "Always allow" choices (session first),
// the /permissions list items, the long-turn notification's text, and the panel's `/permissions`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ruleItems, scopeItems, turnEndText } from '../src/permissionItems';
import { SLASH_COMMANDS } from '../src/shared/messages';

test('"Always allow" offers the session first, then the folder and the user', () => {
  assert.deepEqual(scopeItems().map((i) => i.scope), ['session', 'workspace', 'user']);
});

test('the rules list names each rule, its list and where it is kept; a project rule says where to edit it', () => {
  const items = ruleItems({
    rules: [
      { rule: 'Bash(npm test:*)', decision: 'allow', scope: 'workspace' },
      { rule: 'Bash(rm:*)', decision: 'deny', scope: 'project' },
    ],
  });
  assert.equal(items[0].label, '$(check) Bash(npm test:*)');
  assert.equal(items[0].description, 'allow · this folder');
  assert.equal(items[0].rule?.rule, 'Bash(npm test:*)');
  assert.match(items[1].detail ?? '', /\.shiro-neko\/settings\.json/);
  const empty = ruleItems({ rules: [] });
  assert.equal(empty.length, 1);
  assert.equal(empty[0].rule, undefined);
});

test('a turn notifies only from the threshold on, saying how it ended', () => {
  assert.equal(turnEndText(29.9, 30, 'completed'), undefined);
  assert.equal(turnEndText(30, 30, 'completed'), 'shiro-neko: the turn finished (30 s).');
  assert.equal(turnEndText(300, 30, 'error'), 'shiro-neko: the turn ended with an error (5 min).');
  assert.equal(turnEndText(0, 0, 'aborted'), 'shiro-neko: the turn was aborted (0 s).');
});

test('the panel completes /permissions', () => {
  assert.ok(SLASH_COMMANDS.some((c) => c.name === 'permissions'));
});
