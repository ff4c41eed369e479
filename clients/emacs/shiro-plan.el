;;; shiro-plan.el --- plan mode for shiro.el  -*- lexical-binding: t; -*-

;;; Commentary:
;; Plan mode (issue 39): `shiro-plan-mode' switches plan <-> act, `shiro-act' leaves plan mode (with
;; the approvals picked), `shiro-start-plan' is act mode then "Carry out the plan.".  In plan mode the
;; server offers and runs only what changes nothing (`shiro.setMode', `shiro/status' :mode); the
;; mode line shows "plan", and a completed plan-mode turn ends with the offer to start it.

;;; Code:

(require 'shiro)

(defconst shiro-plan-start-prompt "Carry out the plan." "What `shiro-start-plan' sends.")
(defconst shiro--approvals '("ask" "auto-edit" "auto"))

(defun shiro-plan-p ()
  "Non-nil while the shown session is in plan mode (its last `shiro/status')."
  (equal (plist-get shiro--status :mode) "plan"))

(defun shiro-set-mode (mode &optional approvals)
  "Set the session's MODE (\"plan\" or \"act\"), with act APPROVALS (\"ask\", \"auto-edit\",
\"auto\") or as they are.  The result plist (`shiro.setMode')."
  (let ((result (shiro--command "shiro.setMode" (append (list :mode mode) (and approvals (list :approvals approvals))))))
    (setq shiro--status (plist-put shiro--status :mode (plist-get result :mode)))
    (force-mode-line-update t)
    (shiro--insert (if (equal (plist-get result :mode) "plan")
                       "[plan mode: the model reads and plans; nothing is changed (M-x shiro-plan-mode to leave)]\n"
                     (format "[act mode: approvals %s]\n" (plist-get result :approvals)))
                   'shiro-dim)
    result))

(defun shiro-plan-mode ()
  "Switch plan mode on, or off (back to act mode) when it is on."
  (interactive)
  (shiro-set-mode (if (shiro-plan-p) "act" "plan")))

(defun shiro--read-approvals ()
  (let ((choice (completing-read "Approvals (empty: as they are): " shiro--approvals nil t)))
    (and (not (string-empty-p choice)) choice)))

(defun shiro-act (&optional approvals)
  "Leave plan mode, with APPROVALS or as they are."
  (interactive (list (shiro--read-approvals)))
  (shiro-set-mode "act" approvals))

(defun shiro-start-plan (&optional approvals)
  "Act mode (with APPROVALS or as they are), then carry out the plan."
  (interactive (list (shiro--read-approvals)))
  (shiro-set-mode "act" approvals)
  (shiro-send shiro-plan-start-prompt))

(defun shiro--plan-ready (event)
  "After a completed plan-mode turn (EVENT): the offer to start the plan."
  (when (and (shiro-plan-p) (equal (plist-get event :status) "completed"))
    (shiro--insert "[plan ready: M-x shiro-start-plan carries it out; M-x shiro-plan-mode goes back to act mode]\n\n"
                   'shiro-warn)))

(add-hook 'shiro-turn-end-functions #'shiro--plan-ready)

(provide 'shiro-plan)
;;; shiro-plan.el ends here
