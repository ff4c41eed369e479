// The composer's Plan / Act switch and the "Start" bar under a finished plan (issue 39). The host
// (src/planMode.ts) owns the mode; this renders it and sends what the user clicks.

import type { ModeView, WebviewToHost } from '../src/shared/messages';

export interface PlanModeView {
  apply(view: ModeView): void;
}

export function planModeView(post: (msg: WebviewToHost) => void): PlanModeView {
  const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
  const act = $<HTMLButtonElement>('mode-act');
  const plan = $<HTMLButtonElement>('mode-plan');
  const ready = $<HTMLDivElement>('plan-ready');
  const composer = $<HTMLElement>('composer');
  const input = $<HTMLTextAreaElement>('input');
  const placeholder = input.placeholder;
  act.addEventListener('click', () => post({ t: 'setMode', mode: 'act' }));
  plan.addEventListener('click', () => post({ t: 'setMode', mode: 'plan' }));
  $<HTMLButtonElement>('plan-start').addEventListener('click', () => post({ t: 'startPlan' }));
  $<HTMLButtonElement>('plan-start-auto').addEventListener('click', () => post({ t: 'startPlan', approvals: 'auto-edit' }));
  return {
    apply(view: ModeView): void {
      const planning = view.mode === 'plan';
      act.setAttribute('aria-checked', String(!planning));
      plan.setAttribute('aria-checked', String(planning));
      composer.classList.toggle('planning', planning);
      input.placeholder = planning ? 'Plan mode: describe the change; nothing is changed until you Start' : placeholder;
      ready.hidden = !view.planReady;
    },
  };
}
